"""The providers' transport (httpcore's pool on plain asyncio): real sockets to a local server, plain and TLS — a
streamed body arrives whole and in order, keep-alive reuses the connection, the certificate is checked, a stall
is httpx's ReadTimeout, a refused connection httpx's ConnectError — and a model call never loads anyio's network
backend (its cancel scope per read was the cost this transport removes)."""

from __future__ import annotations

import datetime
import http.server
import json
import os
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from kgent.providers.transport import AsyncioTransport
from kgent.testing import ModelServer

CHUNKS = [f"chunk {i}\n".encode() * 50 for i in range(200)]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    peers: list[tuple[str, int]]
    stall: threading.Event

    def do_GET(self) -> None:
        self.peers.append(self.client_address)
        self.send_response(200)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        if self.path == "/stall":
            self.wfile.flush()
            self.stall.wait(30)
            return
        for chunk in CHUNKS:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")

    def do_POST(self) -> None:
        size = len(self.rfile.read(int(self.headers["content-length"])))
        body = str(size).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(tls: ssl.SSLContext | None = None) -> Iterator[tuple[int, type[Handler]]]:
    handler = type("H", (Handler,), {"peers": [], "stall": threading.Event()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.handle_error = lambda request, address: None  # type: ignore[method-assign]  # a client gone mid-answer
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], handler
    finally:
        handler.stall.set()
        server.shutdown()
        server.server_close()


def certificate(tmp_path: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A test authority and a certificate for localhost: (server context, client context trusting the authority)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kgent test authority")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "leaf.pem", tmp_path / "leaf.key"
    cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_file, key_file)
    client = ssl.create_default_context(cadata=ca.public_bytes(serialization.Encoding.PEM).decode())
    return server, client


def client(tls: ssl.SSLContext | None = None, read: float = 10.0) -> httpx.AsyncClient:
    context = tls or ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    timeout = httpx.Timeout(connect=10.0, read=read, write=10.0, pool=10.0)
    return httpx.AsyncClient(transport=AsyncioTransport(context), timeout=timeout, trust_env=False)


async def streamed(http: httpx.AsyncClient, url: str) -> list[bytes]:
    async with http.stream("GET", url) as response:
        assert response.status_code == 200
        return [part async for part in response.aiter_raw()]


async def test_a_streamed_body_arrives_whole_and_keep_alive_reuses_the_connection() -> None:
    with serve() as (port, handler):
        async with client() as http:
            first = await streamed(http, f"http://127.0.0.1:{port}/")
            second = await streamed(http, f"http://127.0.0.1:{port}/")
    assert b"".join(first) == b"".join(CHUNKS) == b"".join(second)
    assert (
        len(handler.peers) == 2 and handler.peers[0] == handler.peers[1]
    )  # the same client port: one connection


async def test_a_large_request_body_is_sent_whole() -> None:
    """Past the socket's buffers, writing waits for the loop's flow control (an image-sized request)."""
    body = os.urandom(16 << 20)
    with serve() as (port, _):
        async with client() as http:
            response = await http.post(f"http://127.0.0.1:{port}/", content=body)
    assert response.text == str(len(body))


async def test_over_tls_the_certificate_is_checked(tmp_path: Path) -> None:
    server_tls, client_tls = certificate(tmp_path)
    with serve(server_tls) as (port, _):
        async with client(client_tls) as http:
            body = await streamed(http, f"https://localhost:{port}/")
        assert b"".join(body) == b"".join(CHUNKS)
        async with client(ssl.create_default_context()) as http:  # trusts the system's authorities only
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await streamed(http, f"https://localhost:{port}/")


async def test_a_stalled_stream_is_a_read_timeout_and_a_refused_connection_a_connect_error() -> None:
    with serve() as (port, _):
        async with client(read=0.2) as http:
            with pytest.raises(httpx.ReadTimeout):
                await streamed(http, f"http://127.0.0.1:{port}/stall")
    async with client() as http:
        with pytest.raises(httpx.ConnectError):
            await streamed(http, f"http://127.0.0.1:{port}/")  # the server is gone


# argv: BASE_URL OUT: one streamed model call through the OpenAI provider, anyio.fail_after's calls counted (a
# profile hook, the interpreter's edge); {"deltas", "fail_after"} to OUT.
CALL = """import asyncio, json, sys
import anyio
from kgent.core.messages import UserMessage
from kgent.providers import create_provider
from kgent.providers.base import ProviderConfig, ProviderRequest, TextDelta
provider = create_provider(ProviderConfig(provider="openai", model="m", base_url=sys.argv[1], api_key="sk-test"))
scopes = 0

def count(frame, event, arg):
    global scopes
    if event == "call" and frame.f_code is anyio.fail_after.__wrapped__.__code__:
        scopes += 1

async def main():
    sys.setprofile(count)
    request = ProviderRequest(system_prompt="", messages=(UserMessage(text="hi"),), model="m")
    deltas = sum([isinstance(e, TextDelta) async for e in provider.stream(request)])
    sys.setprofile(None)
    await provider.aclose()
    return deltas

deltas = asyncio.run(main())
open(sys.argv[2], "w").write(json.dumps({"deltas": deltas, "fail_after": scopes}))
"""


def test_a_streamed_model_call_opens_no_anyio_cancel_scope_per_read(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    answer = " ".join(f"w{i}" for i in range(200))
    with ModelServer([[{"text": answer, "chunks": 200}]]) as server:
        env = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
        done = subprocess.run(
            [sys.executable, "-c", CALL, server.base_url("openai"), str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["deltas"] > 100, result
    assert result["fail_after"] == 0, result  # anyio's network backend: one per read and write


class Proxy(http.server.BaseHTTPRequestHandler):
    """A forward proxy that answers every request itself with a one-delta OpenAI stream, noting the target."""

    protocol_version = "HTTP/1.1"
    targets: list[str]

    def do_POST(self) -> None:
        self.targets.append(self.path)
        self.rfile.read(int(self.headers.get("content-length", "0")))
        chunk = {
            "id": "c",
            "choices": [{"index": 0, "delta": {"content": "via the proxy"}, "finish_reason": None}],
        }
        end = {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        body = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


async def test_a_proxy_named_in_the_environment_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from kgent.core.messages import UserMessage
    from kgent.providers import create_provider
    from kgent.providers.base import ProviderConfig, ProviderRequest, TextDelta

    handler = type("P", (Proxy,), {"targets": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.server_address[1]}")
        config = ProviderConfig(
            provider="openai", model="m", base_url="http://models.invalid/v1", api_key="sk-t"
        )
        provider = create_provider(config)
        request = ProviderRequest(system_prompt="", messages=(UserMessage(text="hi"),), model="m")
        text = "".join([e.text async for e in provider.stream(request) if isinstance(e, TextDelta)])
        await provider.aclose()
    finally:
        server.shutdown()
        server.server_close()
    assert text == "via the proxy"
    assert handler.targets == ["http://models.invalid/v1/chat/completions"]
