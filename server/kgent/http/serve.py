"""Process entry of `kgent serve --http`: bind, print the URL with its token once, serve with uvicorn until a signal."""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import sys
from collections.abc import Mapping
from typing import TextIO

import uvicorn
from dotenv import dotenv_values

from kgent.http.app import create_app
from kgent.http.guard import HttpConfig
from kgent.http.security import KEEP_ALIVE, MAX_HEAD, protocol

log = logging.getLogger("kgent.http")


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: a free one), so the URL printed is the one served."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say so, and without it every small response
    # written in two parts waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def settings_env(env: Mapping[str, str], env_file: str | None) -> dict[str, str]:
    """The server's settings: `env` (flags and the environment) over the dotenv file's values. The file is the
    operator's: its values configure this process only — they never enter `os.environ`, so tool commands never see
    them. OSError when the file cannot be read."""
    if env_file is None:
        return dict(env)
    with open(env_file, encoding="utf-8") as f:
        values = dotenv_values(stream=f, interpolate=False)
    return {**{k: v for k, v in values.items() if v is not None}, **env}


def url(config: HttpConfig, port: int) -> str:
    host = f"[{config.host}]" if ":" in config.host else config.host
    return f"{config.scheme}://{host}:{port}/"


def banner(config: HttpConfig, base: str, *, terminal: bool) -> str:
    """What the server prints when it starts: where it serves and the URL that signs a browser in. A token the
    server made is printed (nobody else knows it). KGENT_HTTP_TOKEN is printed in that URL only to a terminal: the
    person who started the server sees their own token there, as Jupyter prints its own; output that goes to a file or
    a pipe (a service's log, a test's capture) says where the token comes from instead."""
    lines = f"kgent: serving on {base}  (workspaces: {', '.join(config.workspace_roots)})\n"
    if not config.token_from_env:
        return lines + f"kgent: token {config.token}\nkgent: open {base}?token={config.token}\n"
    if terminal:
        return lines + f"kgent: token from KGENT_HTTP_TOKEN; open {base}?token={config.token}\n"
    return lines + f"kgent: token (from KGENT_HTTP_TOKEN); open {base}?token=<KGENT_HTTP_TOKEN>\n"


def serve(config: HttpConfig, env: Mapping[str, str], out: TextIO = sys.stdout) -> int:
    try:
        sock = bind(config.host, config.port)
    except OSError as exc:
        sys.stderr.write(f"kgent: cannot listen on {config.host}:{config.port}: {exc.strerror}\n")
        return 1
    port = sock.getsockname()[1]
    try:
        http = protocol(env)
    except ValueError as exc:
        sock.close()
        sys.stderr.write(f"kgent: {exc}\n")
        return 1
    app = create_app(config, env)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            http=http,  # closes connections whose request never arrives complete (kgent.http.security)
            timeout_keep_alive=KEEP_ALIVE,
            h11_max_incomplete_event_size=MAX_HEAD,
            ssl_keyfile=config.ssl_keyfile,
            ssl_certfile=config.ssl_certfile,
            timeout_graceful_shutdown=3,
        )
    )
    out.write(banner(config, url(config, port), terminal=out.isatty()))
    out.flush()
    # uvicorn shuts down gracefully on SIGINT / SIGTERM, then re-raises the signal: that is a normal stop here.
    signal.signal(signal.SIGTERM, _stopped)
    try:
        asyncio.run(server.serve(sockets=[sock]))
    except KeyboardInterrupt:
        pass
    return 0


def _stopped(signum: int, frame: object) -> None:
    raise SystemExit(0)
