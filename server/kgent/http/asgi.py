"""`uvicorn kgent.http.asgi:app`: the HTTP front as an importable ASGI app, configured from the environment.

uvicorn owns the socket (`--host`, `--port`, `--ssl-keyfile` / `--ssl-certfile`, its own `--env-file`); the app reads
the rest as `kgent serve --http` does: `KGENT_HTTP_TOKEN` (else a token printed to stderr once),
`KGENT_HTTP_WORKSPACE_ROOTS` (directories, `os.pathsep`-separated; default: the current directory),
`KGENT_HTTP_CORS_ORIGINS` (comma-separated) and the provider / mode settings of README § Configuration. Since it cannot
refuse to bind, it refuses requests that reach a non-loopback address over plain HTTP (unless
`KGENT_HTTP_INSECURE=1`): put TLS on uvicorn or on a proxy in front (docs/http/deploy.md).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from kgent.http.app import create_app
from kgent.http.guard import TOKEN_ENV, HttpConfig, error_body, is_loopback, make_config
from kgent.service.errors import CONFIG

ROOTS_ENV = "KGENT_HTTP_WORKSPACE_ROOTS"
CORS_ENV = "KGENT_HTTP_CORS_ORIGINS"
INSECURE_ENV = "KGENT_HTTP_INSECURE"


def config_from_env(env: Mapping[str, str]) -> HttpConfig:
    """The HTTP front's settings from the environment alone (ValueError: a sentence for the operator)."""
    roots = [r for r in env.get(ROOTS_ENV, "").split(os.pathsep) if r.strip()]
    origins = [o.strip() for o in env.get(CORS_ENV, "").split(",") if o.strip()]
    # uvicorn binds, so the address check of `kgent serve --http` becomes PlainHttpGuard's check per request
    return make_config(
        env, host="127.0.0.1", port=None, workspace_roots=roots, cors_origins=origins, insecure=False
    )


class PlainHttpGuard:
    """ASGI middleware: a request that reached a non-loopback address without TLS is refused (403) — the token and
    the code would cross the network in clear text."""

    def __init__(self, app: ASGIApp, *, insecure: bool) -> None:
        self.app = app
        self.insecure = insecure

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.insecure and scope.get("scheme") != "https":
            server = scope.get("server")
            if server is not None and not is_loopback(str(server[0])):
                body = error_body(
                    CONFIG,
                    "refused: this server is reached over the network without TLS; serve it with "
                    f"--ssl-keyfile / --ssl-certfile or behind a TLS proxy (or set {INSECURE_ENV}=1)",
                    "tls_required",
                )
                await send({"type": "http.response.start", "status": 403, "headers": _JSON})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


_JSON = [(b"content-type", b"application/json")]


def build(env: Mapping[str, str]) -> FastAPI:
    """The app for this environment; prints the token to stderr when the environment gave none."""
    config = config_from_env(env)
    if not config.token_from_env:
        sys.stderr.write(
            f"kgent: token {config.token} (set {TOKEN_ENV} to choose it); open /?token={config.token}\n"
        )
        sys.stderr.flush()
    app = create_app(config, env)
    app.add_middleware(PlainHttpGuard, insecure=env.get(INSECURE_ENV, "") in ("1", "true", "yes"))
    return app


app = build(os.environ)
