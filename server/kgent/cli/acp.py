"""`kgent acp`: the Agent Client Protocol front (newline-delimited JSON-RPC over stdin/stdout) for Zed, JetBrains,
CodeCompanion, avante.nvim and any ACP client. Sessions are the stdio daemon's: the same store, the same ids."""

from __future__ import annotations

import argparse
from typing import Any

from kgent.cli.frontflags import add_provider_flags, env_with_flags


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "acp",
        help="run as an Agent Client Protocol agent over stdio (Zed, JetBrains, CodeCompanion, avante.nvim)",
        description="Serve one ACP client over stdin/stdout (ACP v1, newline-delimited JSON-RPC). Logs go to stderr.",
    )
    add_provider_flags(p, mode_help="a new session's mode")
    return p


def run(args: argparse.Namespace) -> int:
    from kgent.acp.main import main

    env = env_with_flags(args)
    return main(env, log_level=args.log_level)
