"""`kgent` command line: run | demo | debug | serve | acp | sessions | extensions | rules | swebench | desktop. Subcommands import what they need lazily."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from kgent.core.loading import loading, start_process

# subcommand → module exposing add_parser(subparsers) and run(args) -> int
SUBCOMMANDS = {
    "run": "kgent.cli.run",
    "demo": "kgent.cli.demo",
    "debug": "kgent.cli.debug",
    "serve": "kgent.cli.serve",
    "acp": "kgent.cli.acp",
    "sessions": "kgent.cli.sessions",
    "extensions": "kgent.cli.extensions",
    "rules": "kgent.cli.rules",
    "swebench": "kgent.cli.swebench",
    "desktop": "kgent.cli.desktop",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kgent", description="Kgent: a coding-agent kernel for editors.")
    sub = parser.add_subparsers(dest="command", metavar="{" + ",".join(SUBCOMMANDS) + "}")
    for name, module in SUBCOMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=argparse.SUPPRESS)
            continue
        try:
            importlib.import_module(module).add_parser(sub)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # the `kgent` process itself (not a caller's in-process use): its start (kgent.core.loading: before the
    # subcommand's modules define their classes), the keys out of its environ block
    if argv is None:
        from kgent.core.keyenv import hide_keys

        start_process()
        hide_keys()
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args_list if not a.startswith("-")), None)
    with loading():  # the subcommand's modules (kgent.core.loading)
        parser = build_parser(first if first in SUBCOMMANDS else None)
        args = parser.parse_args(args_list)
        if args.command is None:
            # A usage error goes to stderr (exit status 2), so an editor that spawned `kgent` for JSON-RPC can show it.
            parser.error("choose a subcommand (the editor daemon is `kgent serve --stdio`)")
        module = importlib.import_module(SUBCOMMANDS[args.command])
    try:
        return int(module.run(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `kgent run --json ... | head`: the reader left; leave quietly
        stdout_to_devnull()
        return 141


def stdout_to_devnull() -> None:
    """stdout's reader has gone: what is still buffered, and the interpreter's flush at exit, go nowhere rather than
    fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
