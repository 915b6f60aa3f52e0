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


def _show_config(renderer: Any, kernel: Any) -> None:
    p = kernel.provider
    renderer.note({"=== Configuration ===": f"provider={p.name} model={p.model} mode={kernel.config.mode}"})


async def _one(kernel: Any, renderer: Any, text: str, workspace: Any, session_id: str | None) -> Any:
    from kgent.cli.run import drive

    run = kernel.create_run(text, workspace=workspace, session_id=session_id)
    result = await drive(run, renderer, interactive=sys.stdin.isatty())
    renderer.note({"=== FINAL ANSWER ===": result.text or "(none)"})
    return result


async def _main(args: argparse.Namespace) -> int:
    from kgent.cli.render import HumanRenderer
    from kgent.cli.run import build_kernel, workspace_of
    from kgent.context.projection import project
    from kgent.core.errors import KgentError
    from kgent.core.messages import message_to_dict

    renderer = HumanRenderer()
    if _keyless(args):
        args.provider, args.model, args.script = "scripted", None, args.script or "calculate"
        renderer.note({"[no API key]": KEYLESS})
    try:
        kernel = build_kernel(args, args.mode)
    except KgentError as exc:
        renderer.note({"[config-error]": exc.message})
        return 2
    workspace = workspace_of(args)
    _show_config(renderer, kernel)
    once = args.once or (" ".join(args.message) if args.message else None)
    session_id: str | None = None
    try:
        if once:
            result = await _one(kernel, renderer, once, workspace, None)
            return 0 if result.status == "settled" else 1
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
                session_id = None
                renderer.note({"session": "new session on the next message"})
            elif line == "/session":
                renderer.note({"session": session_id or "(none yet)"})
            elif line == "/history":
                if session_id is None:
                    renderer.note({"history": "(empty)"})
                    continue
                tree = await kernel.store.load(session_id)
                for message in project(tree.branch()):
                    d = message_to_dict(message)
                    text = d.get("text") or d.get("content") or ""
                    renderer.note({d["role"]: str(text)[:200]})
            else:
                session_id = (await _one(kernel, renderer, line, workspace, session_id)).session_id
    finally:
        await kernel.aclose()


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))
