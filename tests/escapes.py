"""The drive of the escape probes of the files gate and the permissions (test_kernel_escapes_*.py): a real kernel
run on the scripted model, every approval answered by a function (rejected unless a probe says otherwise), what it
emitted, stored and sent recorded as text, and each probe's outcome kept for the report."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgent.core.events import (
    InstructionsEvent,
    PermissionRequest,
    PermissionResolved,
    ToolUpdate,
    event_to_dict,
)
from kgent.core.messages import message_to_dict
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.base import ProviderRequest, StreamEvent
from kgent.providers.scripted import ScriptedProvider
from kgent.sandbox.bwrap import Sandbox
from kgent.session.jsonl import JsonlSessionStore

PREFIX = "KGENTSECRET"
MODES = ("plan", "ask", "auto", "risk_based")

Call = tuple[str, dict[str, Any]]  # (tool, args)
Answer = Callable[[PermissionRequest], str]


def git(ws: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)


def marker(kind: str, token: str) -> str:
    return f"{PREFIX}-{kind}-{token}"


class Recording:
    """The scripted model, keeping every request it was sent as JSON text."""

    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.requests: list[str] = []

    def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(
            json.dumps(
                {"system": request.system_prompt, "messages": [message_to_dict(m) for m in request.messages]},
                ensure_ascii=False,
            )
        )
        return self.inner.stream(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class Outcome:
    texts: list[str] = field(default_factory=list)  # every event, session line and request, as text
    ran: list[str] = field(default_factory=list)  # probes that ran and did not fail
    asked: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)  # refused by the mode without asking
    outputs: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # paths the instructions events named as left out
    decisions: list[PermissionResolved] = field(default_factory=list)

    def leaks(self, markers: dict[str, str]) -> dict[str, str]:
        blob = "\n".join(self.texts)
        return {kind: token for kind, token in markers.items() if token in blob}


def name_of(tool: str, args: dict[str, Any]) -> str:
    return str(args["command"]) if tool == "bash" else f"{tool} {json.dumps(args, sort_keys=True)}"


async def drive(
    ws: Path,
    state: Path,
    calls: list[Call],
    mode: str,
    sandbox: Sandbox,
    *,
    answer: str | Answer = "reject_once",
    turns: list[list[Call]] | None = None,
    **config: Any,
) -> Outcome:
    """One run of `calls` in one turn (or `turns`, one batch each), every approval answered by `answer`."""
    batches = turns if turns is not None else [calls]
    script: list[list[dict[str, Any]]] = [
        [{"tool": t, "args": a, "id": f"c{b}_{i}"} for i, (t, a) in enumerate(batch)]
        for b, batch in enumerate(batches)
    ]
    names = {f"c{b}_{i}": name_of(t, a) for b, batch in enumerate(batches) for i, (t, a) in enumerate(batch)}
    provider = Recording(ScriptedProvider([*script, [{"text": "done"}]]))
    kernel = AgentKernel(
        provider,  # type: ignore[arg-type]
        store=JsonlSessionStore(state),
        config=KernelConfig(mode=mode, **config),
        sandbox=sandbox,
    )
    run = kernel.create_run("probe", workspace=ws)
    out = Outcome()
    async for event in run:
        out.texts.append(json.dumps(event_to_dict(event), ensure_ascii=False))
        if isinstance(event, PermissionRequest):
            out.asked.append(names[event.tool_call.tool_call_id])
            run.resolve_permission(event.request_id, answer(event) if callable(answer) else answer)
        elif isinstance(event, PermissionResolved):
            out.decisions.append(event)
            if event.source == "policy":
                out.denied.append(names[event.tool_call_id])
        elif isinstance(event, InstructionsEvent):
            out.skipped += [s.path for s in getattr(event, "skipped", ())]
        elif isinstance(event, ToolUpdate) and event.status == "completed" and event.output is not None:
            out.ran.append(names[event.tool_call_id])
            out.outputs[names[event.tool_call_id]] = event.output
    result = await run.result()
    assert result.status == "settled", result.error
    await kernel.aclose()
    out.texts += await asyncio.to_thread(lambda: [p.read_text("utf-8") for p in state.rglob("*.jsonl")])
    out.texts += provider.requests
    return out


def report(
    state: Path, world: str, mode: str, sandbox: Sandbox, probes: int, out: Outcome, leaks: int
) -> None:
    """One line of the suite's report (probes, what ran, was asked or denied, leaks), beside the sessions."""
    state.mkdir(parents=True, exist_ok=True)
    line = {
        "world": world,
        "mode": mode,
        "sandbox": sandbox.name,
        "probes": probes,
        "ran": len(out.ran),
        "asked": len(out.asked),
        "denied": len(out.denied),
        "leaks": leaks,
    }
    with (state / "report.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
