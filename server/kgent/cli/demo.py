"""`kgent demo`: the kernel end to end on the scripted provider in a temp workspace. No key, no network."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path
from typing import Any

SAMPLE = "value = 1\nprint(value)\n"
# The demo cases: a built-in script each, and the prompt its run starts with.
PROMPTS = {
    "tool-loop": "Change value in sample.py to 2 and check it.",
    "streamed-run": "Say hello.",
    "plan": "What does sample.py print? Keep a plan.",
    "task": "What does sample.py print? Ask a sub-agent.",
}


def add_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="watch a scripted run (no API key, no network)")
    p.add_argument("case", nargs="?", default="tool-loop", choices=list(PROMPTS))
    p.add_argument("--json", action="store_true", help="print JSON Lines of events")


async def _main(args: argparse.Namespace) -> int:
    from kgent.cli.render import HumanRenderer, JsonRenderer
    from kgent.cli.run import drive
    from kgent.core.events import PermissionRequest
    from kgent.kernel import AgentKernel, KernelConfig
    from kgent.providers.scripted import ScriptedProvider

    renderer = JsonRenderer() if args.json else HumanRenderer()

    def approve(request: PermissionRequest) -> str:
        renderer.note({"demo": f"approving '{request.tool_call['title']}' once (a person would decide here)"})
        return "allow_once"

    with tempfile.TemporaryDirectory(prefix="kgent-demo-") as tmp:
        workspace = Path(tmp)
        (workspace / "sample.py").write_text(SAMPLE, encoding="utf-8")
        kernel = AgentKernel(ScriptedProvider(args.case), config=KernelConfig(mode="ask"))
        run = kernel.create_run(PROMPTS[args.case], workspace=workspace)
        result = await drive(run, renderer, interactive=False, answer=approve)
        await kernel.aclose()
    return 0 if result.status == "settled" else 1


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))
