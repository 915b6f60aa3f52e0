"""`kgent debug`: Kgent's debug REPL (seed 000) on the same kernel — every line a run in one session.

Commands: /help, /reset (new session), /history (the session's messages), /session, exit | quit.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

KEYLESS = (
    "the scripted model plays (it knows the quick start: calculate 12 * 8 + 6); "
    "set DEEPSEEK_API_KEY or KGENT_API_KEY for DeepSeek (docs/deepseek.md)"
)
HELP = "type a task; /help /reset /history /session; exit or quit to leave"


def add_parser(sub: Any) -> None:
    from kgent.cli.run import add_common

    p = sub.add_parser("debug", help="interactive debug REPL on the kernel")
    add_common(p)
    p.add_argument("--once", metavar="PROMPT", help="run one prompt and exit")
    p.add_argument(
        "--permission",
        "--mode",
        dest="mode",
        help="plan | ask | auto | full | risk_based (aliases: interactive, allow_all)",
    )
    p.add_argument("message", nargs="*", help="a one-shot message (like --once)")


def _keyless(args: argparse.Namespace) -> bool:
    """Whether no provider was chosen and the default one has no key: then seed 000's quick start
    (`--once "calculate 12 * 8 + 6"`) runs on the scripted `calculate` model instead of failing."""
    from kgent.config import provider_config, require_key
    from kgent.core.errors import ConfigError

    if args.provider or os.environ.get("KGENT_PROVIDER"):
        return False
    try:
        require_key(provider_config(model=args.model, base_url=args.base_url))
    except ConfigError:
        return True
    return False


def _show_config(renderer: Any, service: Any) -> None:
    from kgent.service.handshake import default_mode

    p = service.providers.get(service.provider_config(None, None))  # the provider the runs will use
    mode = default_mode(service.settings, service.env)
    renderer.note({"=== Configuration ===": f"provider={p.name} model={p.model} mode={mode}"})


async def _main(args: argparse.Namespace) -> int:
    from kgent.cli.render import HumanRenderer
    from kgent.cli.run import run_service
    from kgent.cli.terminal import TerminalPort
    from kgent.context.projection import project
    from kgent.core.errors import KgentError
    from kgent.core.messages import message_to_dict
    from kgent.service.errors import ServiceError

    renderer = HumanRenderer()
    if _keyless(args):
        args.provider, args.model, args.script = "scripted", None, args.script or "calculate"
        renderer.note({"[no API key]": KEYLESS})
    args.session, args.fork = None, None
    service = run_service(args, TerminalPort(renderer, interactive=sys.stdin.isatty()))
    try:
        try:
            _show_config(renderer, service)
        except KgentError as exc:
            renderer.note({"[config-error]": exc.message})
            return 2
        once = args.once or (" ".join(args.message) if args.message else None)
        try:
            if once:
                result = await _run_one(service, renderer, args, once)
                return 0 if result.status == "settled" else 1
        except (KgentError, ServiceError) as exc:
            renderer.note({"[config-error]": exc.message})
            return 2
        renderer.note({"kgent debug": HELP})
        loop = asyncio.get_running_loop()
        while True:
            try:
                line = (await loop.run_in_executor(None, input, "kgent> ")).strip()
            except EOFError:
                return 0
            if not line:
                continue
            if line in ("exit", "quit"):
                return 0
            if line == "/help":
                renderer.note({"help": HELP})
            elif line == "/reset":
                args.session = None
                renderer.note({"session": "new session on the next message"})
            elif line == "/session":
                renderer.note({"session": args.session or "(none yet)"})
            elif line == "/history":
                if args.session is None:
                    renderer.note({"history": "(empty)"})
                    continue
                tree = await service.store.load(args.session)
                for message in project(tree.branch()):
                    d = message_to_dict(message)
                    text = d.get("text") or d.get("content") or ""
                    renderer.note({d["role"]: str(text)[:200]})
            else:
                try:
                    args.session = (await _run_one(service, renderer, args, line)).session_id
                except (KgentError, ServiceError) as exc:
                    renderer.note({"[error]": exc.message})
    finally:
        await service.close()


async def _run_one(service: Any, renderer: Any, args: argparse.Namespace, text: str) -> Any:
    """One line as a run in the REPL's session (the shared service starts it, as for every front)."""
    from kgent.cli.run import run_request, until_ended

    handle = await service.start_run(run_request(args, text))
    result = await until_ended(handle)
    renderer.note({"=== FINAL ANSWER ===": result.text or "(none)"})
    return result


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))
