"""`kgent demo`: the kernel end to end on the scripted provider in a temp workspace. No key, no network.

`kgent demo` lists the scenarios; docs/demos.md says what each proves."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from kgent.core.events import prompt_of

SAMPLE = "value = 1\nprint(value)\n"
# The demo cases: a built-in script each, and the prompt its run starts with.
PROMPTS = {
    "tool-loop": "Change value in sample.py to 2 and check it.",
    "streamed-run": "Say hello.",
    "plan": "What does sample.py print? Keep a plan.",
    "task": "What does sample.py print? Ask a sub-agent.",
    "risk-based": "Build, then run sample.py (nobody will answer: risk_based mode).",
}
# Modes other than ask, per case.
MODES = {"risk-based": "risk_based"}
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


# Every scenario, in the order `kgent demo` lists them, with what it shows.
SCENARIOS = {
    "streamed-run": "a run without tools: thinking and an answer streamed, the whole lifecycle as JSON Lines",
    "tool-loop": "read → edit (approved) → bash → answer, and the run's patch",
    "plan": "the plan tool (todo_write): the plan as it changes",
    "task": "a sub-agent (task) whose command is asked like any other",
    "risk-based": "a headless run (risk_based): nobody asked, a medium-risk command runs, a high-risk one is denied",
    "failure": "the provider fails mid-answer: the run ends failed, with the error's code",
    "denied": "an edit the person rejects: the model gets permission_denied and answers accordingly",
    "cancel": "Stop one second into a long command: its process group killed, the run cancelled",
    "extension": "an extension's tool, a hook denying a call, a failing hook named",
    "instructions": "AGENTS.md at the root sent first, src/AGENTS.md once src/ is touched, a skill listed",
    "rewind": "restore a checkpoint: two edits and a sed undone in git, the file the person edited since left alone",
}
# Scenarios whose output is JSON Lines unless --text says otherwise (seed 001's `demo streamed-run`).
JSON_BY_DEFAULT = frozenset({"streamed-run"})


def add_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="watch a scripted run (no API key, no network); no scenario: list them")
    p.add_argument("case", nargs="?", choices=list(SCENARIOS), metavar="SCENARIO", help=", ".join(SCENARIOS))
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON Lines of events")
    out.add_argument("--text", action="store_true", help="print for people (streamed-run prints JSON Lines)")


def listing() -> str:
    """The scenarios, one a line, with the command that plays each."""
    width = max(len(name) for name in SCENARIOS)
    lines = ["Scenarios (no API key, no network; docs/demos.md says what each proves):"]
    lines += [f"  kgent demo {name:<{width}}  {what}" for name, what in SCENARIOS.items()]
    lines.append("Add --json for JSON Lines of events (--text for streamed-run's human output).")
    return "\n".join(lines) + "\n"


async def _main(args: argparse.Namespace) -> int:
    from kgent.cli.demo_instructions import instructions_kernel
    from kgent.cli.render import HumanRenderer, JsonRenderer
    from kgent.core.events import PermissionRequest
    from kgent.kernel import AgentKernel, KernelConfig
    from kgent.providers.scripted import ScriptedProvider

    as_json = args.json or (args.case in JSON_BY_DEFAULT and not args.text)
    renderer = JsonRenderer() if as_json else HumanRenderer()

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
    if args.case == "rewind":
        from kgent.cli.demo_rewind import rewind_demo

        with tempfile.TemporaryDirectory(prefix="kgent-demo-") as tmp:
            return await rewind_demo(Path(tmp), renderer)
    with tempfile.TemporaryDirectory(prefix="kgent-demo-") as tmp:
        workspace = Path(tmp)
        (workspace / "sample.py").write_text(SAMPLE, encoding="utf-8")
        if args.case == "instructions":
            kernel, prompt = instructions_kernel(workspace, renderer)
        elif args.case == "extension":
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
            kernel = AgentKernel(provider, config=KernelConfig(mode=MODES.get(args.case, "ask")))
        run = kernel.create_run(prompt, workspace=workspace)
        runs.append(run)
        result = await drive(run, renderer, approve)
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
    if args.case is None:
        sys.stdout.write(listing())
        return 0
    return asyncio.run(_main(args))


async def drive(run: Any, renderer: Any, answer: Any) -> Any:
    """Consume the run's events, answering approvals with `answer` (the scenario's approver); return the result.

    The demos embed the kernel as a library does (docs/demos.md), with no front between: the only code outside
    the kernel that starts a run without the shared service (tests/test_import_layers.py names them)."""
    async for event in run:
        renderer.event(event)
        asked = prompt_of(event)
        if asked is not None:
            run.resolve_permission(asked.request_id, answer(asked))
    return await run.result()
