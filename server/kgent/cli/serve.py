"""`kgent serve --stdio`: the editor daemon (JSON-RPC over stdin/stdout; protocol.md). Imports nothing heavy:
start-up time is the editor's wait for `initialize`."""

from __future__ import annotations

import argparse
import os
from typing import Any

# flag → the environment variable it overrides (the daemon reads its configuration from one mapping)
_ENV_FLAGS = {
    "provider": "KGENT_PROVIDER",
    "model": "KGENT_MODEL",
    "base_url": "KGENT_BASE_URL",
    "mode": "KGENT_PERMISSION_MODE",
    "approval_timeout": "KGENT_APPROVAL_TIMEOUT",
}


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
    p.add_argument("--provider", help="openai | anthropic | scripted (env KGENT_PROVIDER)")
    p.add_argument("--model", help="model id; for scripted: a script name (env KGENT_MODEL)")
    p.add_argument("--base-url", dest="base_url", help="provider API base URL (env KGENT_BASE_URL)")
    p.add_argument(
        "--mode", help="default permission mode: plan | ask | auto | full (env KGENT_PERMISSION_MODE)"
    )
    p.add_argument(
        "--approval-timeout",
        dest="approval_timeout",
        type=float,
        metavar="SECONDS",
        help="reject approvals left unanswered this long (env KGENT_APPROVAL_TIMEOUT; default: wait)",
    )
    p.add_argument(
        "--log-level", dest="log_level", help="DEBUG | INFO | WARNING | ERROR (env KGENT_LOG_LEVEL)"
    )
    p.add_argument("--log-file", dest="log_file", help="log here instead of stderr (env KGENT_LOG_FILE)")
    return p


def run(args: argparse.Namespace) -> int:
    from kgent.daemon.boot import main

    env = dict(os.environ)
    for attr, var in _ENV_FLAGS.items():
        value = getattr(args, attr, None)
        if value is not None:
            env[var] = str(value)
    return main(env, log_file=args.log_file, log_level=args.log_level)
