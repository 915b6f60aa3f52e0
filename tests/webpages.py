"""A real HTTP server on loopback for web_fetch's tests: pages, redirects, a slow and a huge response, and an echo
of the request's headers. Each request is recorded (path, headers)."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PAGE = b"""<!doctype html><html><head><title>Kgent page</title><style>body{color:red}</style></head>
<body><h1>Fetched heading</h1><script>window.secret = "no script text";</script>
<p>Some <b>bold</b> text and <a href="/other">a link</a>.</p><ul><li>first</li><li>second</li></ul></body></html>"""
BIG = 6 * 1024 * 1024


class Site(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[tuple[str, dict[str, str]]]

    scheme = "http"

    @property
    def base(self) -> str:
        return f"{self.scheme}://{self.server_address[0]}:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Site

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, ctype: str, body: bytes, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.server.requests.append((self.path, dict(self.headers.items())))
        port = self.server.server_address[1]
        routes = {
            "/page": lambda: self._send(200, "text/html; charset=utf-8", PAGE),
            "/text": lambda: self._send(200, "text/plain", b"plain text\n"),
            "/png": lambda: self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 100),
            "/missing": lambda: self._send(404, "text/html", b"<h1>No such page</h1>"),
            "/headers": lambda: self._send(
                200, "application/json", json.dumps(dict(self.headers.items())).encode()
            ),
            "/to-page": lambda: self._send(302, "text/plain", b"", Location="/page"),
            "/to-file": lambda: self._send(302, "text/plain", b"", Location="file:///etc/passwd"),
            "/to-localhost": lambda: self._send(
                302, "text/plain", b"", Location=f"http://localhost:{port}/page"
            ),
            "/loop": lambda: self._send(302, "text/plain", b"", Location="/loop"),
        }
        if self.path in routes:
            routes[self.path]()
        elif self.path == "/slow":
            time.sleep(5)
            self._send(200, "text/plain", b"late\n")
        elif self.path == "/big":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            line = b"x" * 1023 + b"\n"
            try:
                for _ in range(BIG // len(line)):
                    self.wfile.write(line)
            except OSError:  # the client stopped reading: as it should
                pass
        else:
            self._send(404, "text/plain", b"not found\n")


@contextmanager
def serve(host: str = "127.0.0.1", port: int = 0, tls: ssl.SSLContext | None = None) -> Iterator[Site]:
    site = Site((host, port), _Handler)
    site.requests = []
    if tls is not None:
        site.socket = tls.wrap_socket(site.socket, server_side=True)
        site.scheme = "https"
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        site.shutdown()
        site.server_close()
