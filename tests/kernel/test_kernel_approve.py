"""Approve with changes in the kernel: AgentRun.resolve_permission with new_text writes the user's version (the
approval still binds to the arguments), the model's next request carries the diff from its proposal; the proposal
itself as new_text is an ordinary approval; a reject never writes the text; the review records the written text."""

from __future__ import annotations

from pathlib import Path

from kgent.core.events import PermissionRequest, PermissionResolved, ToolUpdate
from kgent.core.messages import ToolResultMessage
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider


async def _answer(run, option: str, text: str | None) -> list[object]:
    events = []
    async for event in run:
        events.append(event)
        if isinstance(event, PermissionRequest):
            run.resolve_permission(event.request_id, option, text if event.tool_call.name == "edit" else None)
    return events


async def test_user_version_is_written_and_reported(workspace: Path) -> None:
    provider = ScriptedProvider("tool-loop")
    kernel = AgentKernel(provider, config=KernelConfig(mode="ask"))
    run = kernel.create_run("set value", workspace=workspace)
    events = await _answer(run, "allow_once", "value = 7\nprint(value)\n")
    result = await run.result()
    assert (workspace / "sample.py").read_text() == "value = 7\nprint(value)\n"
    assert "+value = 7" in result.patch and "value = 2" not in result.patch
    resolved = [e for e in events if isinstance(e, PermissionResolved)]
    assert [r.edited for r in resolved] == [True, None]  # the edit, then the bash call
    [edit_done] = [
        e
        for e in events
        if isinstance(e, ToolUpdate) and e.status == "completed" and e.details.get("userEdited")
    ]
    assert "-value = 2\n+value = 7\n" in (edit_done.output or "")
    # what the model reads next as the edit's result
    seen = [
        m for m in provider.requests[-1].messages if isinstance(m, ToolResultMessage) and m.name == "edit"
    ]
    assert len(seen) == 1 and "Keep their changes" in seen[0].content and "+value = 7" in seen[0].content
    await kernel.aclose()


async def test_the_proposal_itself_is_an_ordinary_approval(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("tool-loop", mode="ask")
    run = kernel.create_run("set value", workspace=workspace)
    events = await _answer(run, "allow_once", "value = 2\nprint(value)\n")
    assert [r.edited for r in events if isinstance(r, PermissionResolved)] == [None, None]
    done = [e for e in events if isinstance(e, ToolUpdate) and e.status == "completed"]
    assert any(e.output == "Successfully replaced text in sample.py." for e in done)


async def test_a_reject_with_text_writes_nothing(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("tool-loop", mode="ask")
    run = kernel.create_run("set value", workspace=workspace)
    events = await _answer(run, "reject_once", "value = 7\nprint(value)\n")
    assert (workspace / "sample.py").read_text() == "value = 1\nprint(value)\n"
    assert [r.edited for r in events if isinstance(r, PermissionResolved)][0] is None
