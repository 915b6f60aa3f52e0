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
    p.add_argument("case", nargs="?", default="tool-loop", choices=[*PROMPTS, "extension"])
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
        if args.case == "extension":
            kernel, prompt = _extension_kernel(renderer)
        else:
            kernel = AgentKernel(ScriptedProvider(args.case), config=KernelConfig(mode="ask"))
            prompt = PROMPTS[args.case]
        run = kernel.create_run(prompt, workspace=workspace)
        result = await drive(run, renderer, interactive=False, answer=approve)
        await kernel.aclose()
    return 0 if result.status == "settled" else 1


def _extension_kernel(renderer: Any) -> tuple[Any, str]:
    """A kernel with two extensions registered through kgent.ext's API: `guard` (a tool and a before_tool_call hook)
    and `flaky` (an after_tool_call hook that fails)."""
    from kgent.cli import demo_extension as demo
    from kgent.ext.api import ExtensionAPI
    from kgent.ext.hooks import ExtensionHooks
    from kgent.ext.registry import Registry
    from kgent.kernel import AgentKernel, KernelConfig
    from kgent.providers.scripted import ScriptedProvider

    registry = Registry()
    demo.register_guard(ExtensionAPI("guard", registry))
    demo.register_flaky(ExtensionAPI("flaky", registry))
    for name, things in registry.listing().items():
        renderer.note({"demo": f"extension {name!r} registers {', '.join(things)}"})
    hooks = ExtensionHooks(lambda workspace: registry)
    kernel = AgentKernel(
        ScriptedProvider(demo.SCRIPT, model="extension"), config=KernelConfig(mode="ask"), hooks=hooks
    )
    return kernel, demo.PROMPT


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))
