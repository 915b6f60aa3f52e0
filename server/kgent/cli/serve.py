"""`kgent serve --stdio`: the editor daemon (JSON-RPC over stdin/stdout; protocol.md). Imports nothing heavy:
start-up time is the editor's wait for `initialize`."""

from __future__ import annotations

import argparse
from typing import Any

from kgent.cli.frontflags import add_provider_flags, env_with_flags


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "serve",
        help="run the editor daemon (JSON-RPC over stdio, see protocol.md)",
        description="Serve one editor over stdin/stdout: JSON-RPC 2.0 with Content-Length framing (protocol.md). "
        "Logs go to stderr.",
    )
    p.add_argument(
        "--stdio", action="store_true", help="talk over stdin/stdout (the only transport; the default)"
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
    from kgent.daemon.boot import main

    env = env_with_flags(args)
    return main(env, log_file=args.log_file, log_level=args.log_level)
