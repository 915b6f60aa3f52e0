"""The HTTP front's outer wall, before any route or the token check: the Host-header allowlist (a DNS-rebinding page
on this machine names its own host and is refused), the security headers on every response (the web client may load
only its own files and may not be framed), and the uvicorn protocol that closes connections whose request never
arrives complete (uvicorn itself only times out idle keep-alive connections)."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
from collections.abc import Iterable, Mapping

import h11
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

ALLOWED_HOSTS_ENV = "KGENT_HTTP_ALLOWED_HOSTS"  # more names the server answers to (comma-separated)
REQUEST_TIMEOUT_ENV = "KGENT_HTTP_REQUEST_TIMEOUT"
REQUEST_TIMEOUT = 15.0  # seconds for a whole request (head and body) to arrive once the connection is waiting
KEEP_ALIVE = 5  # seconds an idle keep-alive connection stays open (uvicorn's timeout_keep_alive)
MAX_HEAD = 16 * 1024  # bytes of a request head (h11's max incomplete event size): a longer head is a 400
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_WILDCARDS = ("0.0.0.0", "::", "")

# img-src blob: the composer's thumbnails of the images attached to the next prompt (object URLs of their files).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)
_OURS = {name for name, _ in HEADERS}


def allowed_hosts(bound: str, env: Mapping[str, str]) -> frozenset[str]:
    """The names a request's Host may carry: loopback names, the address the server is bound to, those listed in
    KGENT_HTTP_ALLOWED_HOSTS, and — bound to every interface (0.0.0.0 / ::) — this machine's own names."""
    names = {*LOOPBACK_NAMES, _normal(bound)}
    names.update(_normal(n) for n in env.get(ALLOWED_HOSTS_ENV, "").split(",") if n.strip())
    if _normal(bound) in _WILDCARDS:
        names.update(_normal(n) for n in (socket.gethostname(), socket.getfqdn()))
    names.discard("")
    return frozenset(names)


def _normal(host: str) -> str:
    """A host name as compared: lower case, no trailing dot, an IPv6 literal without brackets in canonical form."""
    host = host.strip().lower().rstrip(".")
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        return bare


def host_of(value: str) -> str | None:
    """The host part of a Host header value (`name`, `name:port`, `[v6]:port`), normalised; None if malformed."""
    value = value.strip()
    if value.startswith("["):
        end = value.find("]")
        if end < 0 or (value[end + 1 :] and not _port(value[end + 2 :], value[end + 1])):
            return None
        return _normal(value[: end + 1])
    name, colon, port = value.partition(":")
    if colon and not _port(port, ":"):
        return None
    return _normal(name) if name else None


def _port(text: str, sep: str) -> bool:
    return sep == ":" and text.isascii() and text.isdigit() and len(text) <= 5


def _error(status: int, message: str, name: str) -> tuple[dict[str, object], bytes]:
    body = json.dumps({"error": {"code": -32600, "message": message, "data": {"code": name}}}).encode()
    start: dict[str, object] = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *HEADERS,
        ],
    }
    return start, body


class Security:
    """ASGI middleware, outermost: refuse a Host outside the allowlist (421), add the security headers."""

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str]) -> None:
        self.app = app
        self.hosts = frozenset(hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        values = [v for k, v in scope["headers"] if k == b"host"]
        host = host_of(values[0].decode("latin-1")) if len(values) == 1 else None
        if host is None or host not in self.hosts:
            shown = values[0].decode("latin-1")[:100] if values else "(none)"
            start, body = _error(
                421 if host is not None else 400,
                f"this server does not answer to the host {shown!r}: open it as http(s)://127.0.0.1 or localhost, "
                f"or the name it was bound to (more names: {ALLOWED_HOSTS_ENV})",
                "host_not_allowed",
            )
            if scope["type"] == "http":
                await send(start)
                await send({"type": "http.response.body", "body": body})
            else:
                await send({"type": "websocket.close", "code": 1008})
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in _OURS]
                message = {**message, "headers": [*kept, *HEADERS]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, plus: while the server waits for a request (a new connection, between keep-alive
    requests, a head or body under way) the whole request must arrive within `request_timeout` seconds, else the
    connection is closed. A request that has arrived (its response may stream for hours) is never timed out."""

    request_timeout: float = REQUEST_TIMEOUT
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._watch()

    def handle_events(self) -> None:
        super().handle_events()
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_watch()
        super().connection_lost(exc)

    def _waiting(self) -> bool:
        return not self.transport.is_closing() and self.conn.their_state in (h11.IDLE, h11.SEND_BODY)

    def _watch(self) -> None:
        """Arm the deadline when the server starts waiting for a request (kept while it stays waiting)."""
        if not self._waiting():
            self._stop_watch()
        elif self._deadline is None:
            self._deadline = self.loop.call_later(self.request_timeout, self._expired)

    def _stop_watch(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self._waiting():
            self.transport.close()


def protocol(env: Mapping[str, str]) -> type[TimedH11Protocol]:
    """The protocol class for uvicorn.Config(http=...), with KGENT_HTTP_REQUEST_TIMEOUT (seconds) if set."""
    raw = env.get(REQUEST_TIMEOUT_ENV)
    try:
        seconds = float(raw) if raw else REQUEST_TIMEOUT
    except ValueError:
        raise ValueError(f"{REQUEST_TIMEOUT_ENV} must be a number of seconds") from None
    return type("KgentH11Protocol", (TimedH11Protocol,), {"request_timeout": max(seconds, 0.05)})
