"""`kgent acp`: the Agent Client Protocol front (newline-delimited JSON-RPC over stdin/stdout) for Zed, JetBrains,
CodeCompanion, avante.nvim and any ACP client. Sessions are the stdio daemon's: the same store, the same ids."""

from __future__ import annotations

import argparse
import os
from typing import Any

# flag → the environment variable it overrides
_ENV_FLAGS = {
    "provider": "KGENT_PROVIDER",
    "model": "KGENT_MODEL",
    "base_url": "KGENT_BASE_URL",
    "mode": "KGENT_PERMISSION_MODE",
}


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "acp",
        help="run as an Agent Client Protocol agent over stdio (Zed, JetBrains, CodeCompanion, avante.nvim)",
        description="Serve one ACP client over stdin/stdout (ACP v1, newline-delimited JSON-RPC). Logs go to stderr.",
    )
    p.add_argument("--provider", help="openai | anthropic | scripted (env KGENT_PROVIDER)")
    p.add_argument("--model", help="model id; for scripted: a script name (env KGENT_MODEL)")
    p.add_argument("--base-url", dest="base_url", help="provider API base URL (env KGENT_BASE_URL)")
    p.add_argument(
        "--mode", help="a new session's mode: plan | ask | auto | full (env KGENT_PERMISSION_MODE)"
    )
    p.add_argument(
        "--log-level", dest="log_level", help="DEBUG | INFO | WARNING | ERROR (env KGENT_LOG_LEVEL)"
    )
    return p


def run(args: argparse.Namespace) -> int:
    from kgent.acp.main import main

    env = dict(os.environ)
    for attr, var in _ENV_FLAGS.items():
        value = getattr(args, attr, None)
        if value is not None:
            env[var] = str(value)
    return main(env, log_level=args.log_level)
