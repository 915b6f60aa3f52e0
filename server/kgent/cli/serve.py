"""`kgent serve --stdio`: the editor daemon (JSON-RPC over stdin/stdout; protocol.md). Imports nothing heavy:
start-up time is the editor's wait for `initialize`. `kgent serve --http`: the HTTP + SSE front and the web client
(protocol-http.md; needs the `kgent[http]` extra)."""

from __future__ import annotations

import argparse
from typing import Any

from kgent.cli.frontflags import add_provider_flags, env_with_flags


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "serve",
        help="run the editor daemon (JSON-RPC over stdio, see protocol.md) or the HTTP server (--http)",
        description="Serve one editor over stdin/stdout: JSON-RPC 2.0 with Content-Length framing (protocol.md). "
        "Logs go to stderr. With --http: serve the same methods over HTTP + SSE and the web client "
        "(protocol-http.md).",
    )
    p.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    http = p.add_argument_group("HTTP (--http; pip install 'kgent[http]')")
    http.add_argument("--http", action="store_true", help="serve HTTP + SSE and the web client instead")
    http.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    http.add_argument("--port", type=int, help="port (default 8000, 8443 with TLS; 0: any free port)")
    http.add_argument(
        "--workspace-root",
        dest="workspace_roots",
        action="append",
        default=[],
        metavar="DIR",
        help="runs may use workspaces under DIR only (repeatable; default: the current directory)",
    )
    http.add_argument(
        "--cors-origin",
        dest="cors_origins",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="allow this browser origin cross-site (repeatable; default: none)",
    )
    http.add_argument(
        "--insecure", action="store_true", help="allow a non-loopback address without TLS (not recommended)"
    )
    http.add_argument(
        "--env-file",
        dest="env_file",
        metavar="FILE",
        help="read the server's settings (KGENT_*, TLS included) from this dotenv file; the environment wins "
        "(default: server.env in the user config dir, when it exists)",
    )
    add_provider_flags(p, mode_help="default permission mode")
    p.add_argument(
        "--approval-timeout",
        dest="approval_timeout",
        type=float,
        metavar="SECONDS",
        help="reject approvals left unanswered this long (env KGENT_APPROVAL_TIMEOUT; default: wait)",
    )
    p.add_argument("--log-file", dest="log_file", help="log here instead of stderr (env KGENT_LOG_FILE)")
    return p


def run(args: argparse.Namespace) -> int:
    env = env_with_flags(args)
    if args.http and args.stdio:
        import sys

        sys.stderr.write("kgent: choose one transport: --stdio or --http\n")
        return 2
    if args.http:
        return run_http(args, env)
    from kgent.daemon.boot import main

    return main(env, log_file=args.log_file, log_level=args.log_level)


def run_http(args: argparse.Namespace, env: dict[str, str]) -> int:
    import sys

    try:
        from kgent.http.guard import make_config
        from kgent.http.serve import serve, settings_env
    except ImportError as exc:
        sys.stderr.write(f"kgent: --http needs the http extra (pip install 'kgent[http]'): {exc}\n")
        return 2
    from kgent.daemon.server import configure_logging
    from kgent.ext.config import user_config_dir

    env_file = args.env_file
    if env_file is None:
        default = user_config_dir(env) / "server.env"
        env_file = str(default) if default.is_file() else None
    try:
        env = settings_env(env, env_file)
    except OSError as exc:
        sys.stderr.write(f"kgent: cannot read --env-file {env_file}: {exc.strerror}\n")
        return 2
    configure_logging(env, args.log_file, args.log_level)
    try:
        config = make_config(
            env,
            host=args.host,
            port=args.port,
            workspace_roots=args.workspace_roots,
            cors_origins=args.cors_origins,
            insecure=args.insecure,
        )
    except ValueError as exc:
        sys.stderr.write(f"kgent: {exc}\n")
        return 2
    return serve(config, env)
