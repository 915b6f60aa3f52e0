"""The HTTP front's security: where it may bind, the bearer token and the browser's session cookie, request body
limits and the workspace allowlist."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kgent.core.images import MAX_IMAGE_BYTES, MAX_IMAGES
from kgent.service.errors import CONFIG, ServiceError

TOKEN_ENV = "KGENT_HTTP_TOKEN"
KEYFILE_ENV, CERTFILE_ENV = "KGENT_SSL_KEYFILE", "KGENT_SSL_CERTFILE"
MAX_BODY = 8 << 20  # bytes: a prompt with attached files fits; a runaway upload does not
# POST /api/runs may also carry a prompt's images, base64-encoded: MAX_IMAGES at MAX_IMAGE_BYTES each, on top.
IMAGES_BODY = MAX_IMAGES * ((MAX_IMAGE_BYTES + 2) // 3 * 4 + 256)
RUNS = "/api/runs"
PUBLIC = ("/health", "/", "/favicon.ico")  # no data behind them: the page and its files carry no secret
PUBLIC_PREFIX = "/static/"
LOGIN, LOGOUT = "/api/login", "/api/logout"
COOKIE_PREFIX = (
    "kgent_session_"  # + the port: cookies are per host, not per port, and two servers may share a host
)
COOKIE_AGE = 30 * 24 * 3600  # seconds; the server forgets every cookie when it stops anyway
CSRF_HEADER = b"x-kgent-client"  # a cookie-authorised request that changes something must carry it
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpConfig:
    """How `kgent serve --http` serves (flags and environment, already checked)."""

    host: str = "127.0.0.1"
    port: int = 8000
    token: str
    token_from_env: bool = False
    workspace_roots: tuple[str, ...]
    cors_origins: tuple[str, ...] = ()
    max_body: int = MAX_BODY
    ssl_keyfile: str | None = None
    ssl_certfile: str | None = None
    insecure: bool = False
    heartbeat: float = 15.0  # seconds between SSE keep-alive comments

    @property
    def tls(self) -> bool:
        return self.ssl_keyfile is not None and self.ssl_certfile is not None

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def make_config(
    env: Mapping[str, str],
    *,
    host: str,
    port: int | None,
    workspace_roots: list[str],
    cors_origins: list[str],
    insecure: bool,
) -> HttpConfig:
    """The config for these flags; ValueError (a sentence for the user) if serving so would be unsafe."""
    keyfile, certfile = env.get(KEYFILE_ENV) or None, env.get(CERTFILE_ENV) or None
    if (keyfile is None) != (certfile is None):
        raise ValueError(f"TLS needs both {KEYFILE_ENV} and {CERTFILE_ENV}")
    tls = keyfile is not None
    if not is_loopback(host) and not tls and not insecure:
        raise ValueError(
            f"refusing to serve on {host} without TLS: anyone on the network could read the token and the code. "
            f"Set {KEYFILE_ENV} and {CERTFILE_ENV}, bind 127.0.0.1, or pass --insecure if you mean it."
        )
    roots = []
    for root in workspace_roots or [os.getcwd()]:
        real = os.path.realpath(os.path.expanduser(root))
        if not os.path.isdir(real):
            raise ValueError(f"--workspace-root {root}: not a directory")
        roots.append(real)
    token = env.get(TOKEN_ENV, "").strip()
    try:
        heartbeat = float(env.get("KGENT_HTTP_HEARTBEAT") or 15.0)
    except ValueError:
        raise ValueError("KGENT_HTTP_HEARTBEAT must be a number of seconds") from None
    return HttpConfig(
        host=host,
        port=port if port is not None else (8443 if tls else 8000),
        token=token or secrets.token_urlsafe(24),
        token_from_env=bool(token),
        workspace_roots=tuple(roots),
        cors_origins=tuple(cors_origins),
        ssl_keyfile=keyfile,
        ssl_certfile=certfile,
        insecure=insecure,
        heartbeat=max(heartbeat, 0.05),
    )


class WorkspaceAllowlist:
    """The Service's workspace guard: only directories under one of the roots given at start."""

    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots

    def allows(self, workspace: str) -> bool:
        real = os.path.realpath(workspace)
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots)

    def __call__(self, workspace: str) -> None:
        if not self.allows(workspace):
            raise ServiceError(
                CONFIG,
                f"workspace {workspace} is outside the directories this server may use (--workspace-root)",
                "workspace_not_allowed",
            )


def error_body(code: int, message: str, name: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message, "data": {"code": name}}}).encode()


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"cache-control", b"no-store"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _refuse(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] = []) -> None:  # noqa: B006
    await _answer(send, status, body, headers)


def _unauthorised() -> bytes:
    return error_body(
        CONFIG,
        "unauthorised: send the server's token as `Authorization: Bearer …` (or sign in at /?token=…)",
        "unauthorised",
    )


def _port(scope: Scope) -> int:
    server = scope.get("server")
    return int(server[1]) if server else 0


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


class Guard:
    """ASGI middleware: the bearer token (or a session cookie it was exchanged for) on every route but the public
    ones, and the request body limit."""

    def __init__(self, app: ASGIApp, *, token: str, max_body: int) -> None:
        self.app = app
        self.token = token.encode()
        self.max_body = max_body
        self.sessions: set[str] = set()  # sha256 of each cookie given out and not revoked

    def bearer(self, scope: Scope) -> bool:
        for name, value in scope["headers"]:
            if name == b"authorization":
                scheme, _, given = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.token)
        return False

    def cookie(self, scope: Scope) -> str | None:
        """The session cookie this request carries for this server, if the server gave it out and it still holds."""
        name = f"{COOKIE_PREFIX}{_port(scope)}"
        for header, value in scope["headers"]:
            if header != b"cookie":
                continue
            text: str = value.decode("latin-1")
            for part in text.split(";"):
                key, _, given = part.strip().partition("=")
                if key == name and _digest(given) in self.sessions:
                    return given
        return None

    def authorised(self, scope: Scope) -> bool:
        if self.bearer(scope):
            return True
        if self.cookie(scope) is None:
            return False
        # SameSite=Strict keeps the cookie off cross-site requests; the custom header is the second lock: a page of
        # another origin cannot add it without a CORS preflight, which this server does not grant.
        return scope["method"] in SAFE_METHODS or any(name == CSRF_HEADER for name, _ in scope["headers"])

    def set_cookie(self, scope: Scope, value: str, max_age: int) -> tuple[bytes, bytes]:
        port = scope["server"][1] if scope.get("server") else 0
        secure = "; Secure" if scope.get("scheme") == "https" else ""
        cookie = (
            f"{COOKIE_PREFIX}{port}={value}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Strict{secure}"
        )
        return (b"set-cookie", cookie.encode())

    async def session_route(self, scope: Scope, send: Send) -> bool:
        """`POST /api/login` (bearer token → a new session cookie) and `POST /api/logout` (revokes it)."""
        path, method = scope["path"], scope["method"]
        if path not in (LOGIN, LOGOUT) or method != "POST":
            return False
        if path == LOGIN and self.bearer(scope):
            value = secrets.token_urlsafe(32)
            self.sessions.add(_digest(value))
            await _answer(send, 200, b"{}", [self.set_cookie(scope, value, COOKIE_AGE)])
        elif path == LOGOUT and self.authorised(scope):
            given = self.cookie(scope)
            if given is not None:
                self.sessions.discard(_digest(given))
            await _answer(send, 200, b"{}", [self.set_cookie(scope, "", 0)])
        else:
            await _refuse(send, 401, _unauthorised(), [(b"www-authenticate", b"Bearer")])
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if await self.session_route(scope, send):
            return
        path: str = scope["path"]
        public = path in PUBLIC or path.startswith(PUBLIC_PREFIX) or scope["method"] == "OPTIONS"
        if not public and not self.authorised(scope):
            await _refuse(send, 401, _unauthorised(), [(b"www-authenticate", b"Bearer")])
            return
        limit = self.limit(scope)
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                await _refuse(send, 413, self._too_large(limit))
                return
        if any(name == b"content-length" for name, _ in scope["headers"]):
            await self.app(scope, receive, send)  # within the limit (the server stops reading at its length)
            return
        # A body without a length (chunked): read it here, up to the limit, and replay it to the app.
        messages: list[Message] = []
        seen = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            seen += len(message.get("body", b""))
            if seen > limit:
                await _refuse(send, 413, self._too_large(limit))
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    def limit(self, scope: Scope) -> int:
        """The body limit of this request: `max_body`, plus room for a prompt's images when it starts a run."""
        return self.max_body + (IMAGES_BODY if scope["path"] == RUNS and scope["method"] == "POST" else 0)

    def _too_large(self, limit: int) -> bytes:
        return error_body(-32600, f"request body over {limit} bytes", "body_too_large")


def cors_kwargs(origins: tuple[str, ...]) -> dict[str, Any]:
    return {
        "allow_origins": list(origins),
        "allow_methods": ["GET", "POST", "PATCH", "DELETE"],
        # never X-Kgent-Client: a cross-origin page that could send it could use a signed-in browser's cookie
        "allow_headers": ["Authorization", "Content-Type", "Last-Event-ID"],
    }
