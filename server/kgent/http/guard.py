"""The HTTP front's security: where it may bind, the bearer token, request body limits and the workspace allowlist."""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kgent.service.errors import CONFIG, ServiceError

TOKEN_ENV = "KGENT_HTTP_TOKEN"
KEYFILE_ENV, CERTFILE_ENV = "KGENT_SSL_KEYFILE", "KGENT_SSL_CERTFILE"
MAX_BODY = 8 << 20  # bytes: a prompt with attached files fits; a runaway upload does not
PUBLIC = ("/health", "/", "/favicon.ico")  # no data behind them: the page and its files carry no secret
PUBLIC_PREFIX = "/static/"


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


async def _refuse(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] = []) -> None:  # noqa: B006
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware: the bearer token on every route but the public ones, and the request body limit."""

    def __init__(self, app: ASGIApp, *, token: str, max_body: int) -> None:
        self.app = app
        self.token = token.encode()
        self.max_body = max_body

    def authorised(self, scope: Scope) -> bool:
        for name, value in scope["headers"]:
            if name == b"authorization":
                scheme, _, given = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.token)
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        public = path in PUBLIC or path.startswith(PUBLIC_PREFIX) or scope["method"] == "OPTIONS"
        if not public and not self.authorised(scope):
            body = error_body(
                CONFIG, "unauthorised: send the server's token as `Authorization: Bearer …`", "unauthorised"
            )
            await _refuse(send, 401, body, [(b"www-authenticate", b"Bearer")])
            return
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > self.max_body:
                await _refuse(send, 413, self._too_large())
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
            if seen > self.max_body:
                await _refuse(send, 413, self._too_large())
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    def _too_large(self) -> bytes:
        return error_body(-32600, f"request body over {self.max_body} bytes", "body_too_large")


def cors_kwargs(origins: tuple[str, ...]) -> dict[str, Any]:
    return {
        "allow_origins": list(origins),
        "allow_methods": ["GET", "POST"],
        "allow_headers": ["Authorization", "Content-Type", "Last-Event-ID"],
    }
