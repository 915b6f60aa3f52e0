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
# An edit the person rejects: the model is told (permission_denied) and answers accordingly.
DENIED_SCRIPT: list[list[dict[str, Any]]] = [
    [
        {"text": "Changing the value."},
        {"tool": "edit", "args": {"path": "sample.py", "oldText": "value = 1", "newText": "value = 2"}},
    ],
    [{"text": "You rejected the edit, so sample.py still sets value = 1."}],
]
# The seed's failure scenarios: a case name → (its script, its prompt, how the run should end).
FAILURES = {
    "failure": ("provider-error", "Say something (the provider will fail mid-answer).", "failed"),
    "denied": ("denied", "Change value in sample.py to 2 (the demo rejects the edit).", "settled"),
    "cancel": ("long-bash", "Run the long command (the demo cancels it one second in).", "cancelled"),
}


def add_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="watch a scripted run (no API key, no network)")
    p.add_argument("case", nargs="?", default="tool-loop", choices=[*PROMPTS, *FAILURES, "extension"])
    p.add_argument("--json", action="store_true", help="print JSON Lines of events")


async def _main(args: argparse.Namespace) -> int:
    from kgent.cli.render import HumanRenderer, JsonRenderer
    from kgent.cli.run import drive
    from kgent.core.events import PermissionRequest
    from kgent.kernel import AgentKernel, KernelConfig
    from kgent.providers.scripted import ScriptedProvider

    renderer = JsonRenderer() if args.json else HumanRenderer()

    runs: list[Any] = []

    def approve(request: PermissionRequest) -> str:
        title = request.tool_call.title
        if args.case == "denied":
            renderer.note({"demo": f"rejecting '{title}' (a person would decide here)"})
            return "reject_once"
        renderer.note({"demo": f"approving '{title}' once (a person would decide here)"})
        if args.case == "cancel":  # the host's Stop, one second into the command
            asyncio.get_running_loop().call_later(1.0, runs[0].cancel)
        return "allow_once"

    expected = FAILURES[args.case][2] if args.case in FAILURES else "settled"
    with tempfile.TemporaryDirectory(prefix="kgent-demo-") as tmp:
        workspace = Path(tmp)
        (workspace / "sample.py").write_text(SAMPLE, encoding="utf-8")
        if args.case == "extension":
            kernel, prompt = _extension_kernel(renderer)
        else:
            script, prompt = (
                FAILURES[args.case][:2] if args.case in FAILURES else (args.case, PROMPTS[args.case])
            )
            provider = (
                ScriptedProvider(DENIED_SCRIPT, model="denied")
                if script == "denied"
                else ScriptedProvider(script)
            )
            kernel = AgentKernel(provider, config=KernelConfig(mode="ask"))
        run = kernel.create_run(prompt, workspace=workspace)
        runs.append(run)
        result = await drive(run, renderer, interactive=False, answer=approve)
        await kernel.aclose()
    if args.case in FAILURES:
        renderer.note({"demo": f"the run ended {result.status}, as this scenario should ({expected})"})
    return 0 if result.status == expected else 1


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
