"""The `task` tool's sub-agents: a fresh context on a branch of its own, events relayed as the parent's sub-run,
approvals through the parent, cancelled with it, and limited in depth and number."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from helpers import collect
from kgent.core.events import (
    PermissionRequest,
    RunEnd,
    RunStart,
    SubRunEvent,
    ToolCallEvent,
    ToolUpdate,
    UsageEvent,
    event_to_dict,
)
from kgent.core.messages import UserMessage
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider
from kgent.session.memory import InMemorySessionStore

SUB_PROMPT = "Run sample.py and report what it prints."


def inner(events: list[Any]) -> list[Any]:
    return [e.event for e in events if isinstance(e, SubRunEvent)]


async def test_a_sub_agent_runs_on_its_own_branch_asks_through_the_parent_and_answers(
    make_kernel, workspace: Path
) -> None:
    kernel: AgentKernel = make_kernel("task", mode="ask")
    run = kernel.create_run("what does sample.py print?", workspace=workspace)
    events = await collect(run, "allow_once")
    result = await run.result()
    assert result.status == "settled" and result.text == "The sub-agent ran sample.py: it prints 1."

    # the parent's own stream: the task call, the sub-run's events wrapped, the task's result
    own = [e for e in events if not isinstance(e, SubRunEvent)]
    [task_call] = [e for e in own if isinstance(e, ToolCallEvent)]
    assert task_call.name == "task" and task_call.title == "Sub-agent: Check sample.py"
    [done] = [e for e in own if isinstance(e, ToolUpdate) and e.status == "completed"]
    assert done.output == "sample.py prints 1." and done.details["status"] == "settled"

    sub = inner(events)
    start, end = sub[0], sub[-1]
    assert isinstance(start, RunStart) and isinstance(end, RunEnd)
    assert start.parent_run_id == run.run_id and start.parent_tool_call_id == task_call.tool_call_id
    assert start.agent == "Check sample.py" and start.prompt == SUB_PROMPT
    assert end.result.status == "settled" and end.result.patch == ""
    # the parent's usage includes the sub-agent's: its whole run counts as one more turn of the parent
    turns = [e.turn for e in events if isinstance(e, UsageEvent)]
    assert {k: v for k, v in end.result.usage.items() if k != "cost"} in turns
    assert result.usage["inputTokens"] == sum(t["inputTokens"] for t in turns)
    assert {e.run_id for e in events if isinstance(e, SubRunEvent)} == {start.run_id}
    # the sub-agent's command was asked, naming it; its read was not
    [asked] = [e for e in sub if isinstance(e, PermissionRequest)]
    assert asked.tool_call.command == "python3 sample.py" and asked.agent == "Check sample.py"
    assert [e.name for e in sub if isinstance(e, ToolCallEvent)] == ["read", "bash"]
    assert events.index(next(e for e in events if isinstance(e, SubRunEvent))) < events.index(done)

    # its context was the task prompt alone, with only the tools it was given
    provider = kernel.provider
    assert isinstance(provider, ScriptedProvider)
    sub_requests = [r for r in provider.requests if r.messages[0] == UserMessage(text=SUB_PROMPT)]
    assert len(sub_requests) == 3 and {t.name for t in sub_requests[0].tools} == {"read", "bash"}

    # the session: the sub-run's branch hangs off the task call, the parent's branch goes on without it
    tree = await kernel.store.load(result.session_id)
    [marker] = [e for e in tree.entries.values() if e.type == "subrun"]
    assert marker.data["agent"] == "Check sample.py" and marker.data["parentRunId"] == run.run_id
    called = tree.entries[marker.parent_id]  # type: ignore[index]
    assert called.data["message"]["toolCalls"][0]["name"] == "task"
    main = [e.id for e in tree.branch(tree.leaf_id)]
    assert marker.id not in main
    sub_branch = [e for e in tree.entries.values() if e.parent_id == marker.id]
    assert sub_branch and sub_branch[0].data["message"] == {"role": "user", "text": SUB_PROMPT}
    # the wire form of a wrapped event
    wrapped = event_to_dict(next(e for e in events if isinstance(e, SubRunEvent)))
    assert wrapped["type"] == "subrun" and wrapped["event"]["type"] == "run_start"
    assert wrapped["event"]["parentRunId"] == run.run_id


async def test_a_rejected_sub_agent_call_is_its_business_and_a_failing_sub_run_is_an_error_result(
    workspace: Path, tmp_path: Path
) -> None:
    script = {
        "turns": [
            [{"tool": "task", "args": {"description": "Break", "prompt": "fail"}}],
            [{"text": "It failed."}],
        ],
        "prompts": {"fail": [[{"error": "the model went away", "code": "provider_unavailable"}]]},
    }
    path = tmp_path / "fail.json"
    path.write_text(__import__("json").dumps(script))
    kernel = AgentKernel(ScriptedProvider(str(path)), config=KernelConfig(mode="ask"))
    run = kernel.create_run("go", workspace=workspace)
    events = await collect(run)
    assert (await run.result()).status == "settled"
    [done] = [
        e for e in events if isinstance(e, ToolUpdate) and not isinstance(e, SubRunEvent) and e.is_error
    ]
    assert done.output is not None and done.output.startswith("sub-agent failed: the model went away")
    assert inner(events)[-1].result.status == "failed"


def _script(turns: list[Any], prompts: dict[str, Any], tmp_path: Path) -> str:
    import json

    path = tmp_path / "s.json"
    path.write_text(json.dumps({"turns": turns, "prompts": prompts}))
    return str(path)


async def test_limits_depth_count_and_tools_are_clear_errors(workspace: Path, tmp_path: Path) -> None:
    nested = {"description": "Nest", "prompt": "nest", "tools": ["task", "read"]}
    script = _script(
        [
            [
                {"tool": "task", "args": {"description": "A", "prompt": "ok"}},
                {"tool": "task", "args": {"description": "B", "prompt": "ok"}},
                {"tool": "task", "args": {"description": "C", "prompt": "ok"}},
            ],
            [{"tool": "task", "args": nested}],
            [{"tool": "task", "args": {"description": "W", "prompt": "ok", "tools": ["write"]}}],
            [{"text": "done"}],
        ],
        {"ok": [[{"text": "fine"}]]},
        tmp_path,
    )
    kernel = AgentKernel(
        ScriptedProvider(script),
        tools=[t for t in __import__("kgent.tools").tools.CODING_TOOLS() if t.name != "write"],
        config=KernelConfig(
            mode="ask", max_subagents=2, max_parallel_subagents=1
        ),  # one by one: results in order
    )
    run = kernel.create_run("go", workspace=workspace)
    events = await collect(run)
    finals = [e.output for e in events if isinstance(e, ToolUpdate) and e.status in ("completed", "failed")]
    assert finals[:2] == ["fine", "fine"]
    assert finals[2] is not None and finals[2].startswith(
        "task_limit: this run has already started 2 sub-agents"
    )
    assert finals[3] is not None and finals[3].startswith("task_depth: sub-agents may nest 1 level(s) deep")
    assert finals[4] is not None and finals[4].startswith("task_tools: a sub-agent here may not have write")

    deep = _script(
        [[{"tool": "task", "args": nested}], [{"text": "done"}]],
        {
            "nest": [
                [{"tool": "task", "args": {"description": "Deeper", "prompt": "ok"}}],
                [{"text": "nested"}],
            ],
            "ok": [[{"text": "fine"}]],
        },
        tmp_path,
    )
    one = AgentKernel(ScriptedProvider(deep), config=KernelConfig(mode="ask"))
    r1 = one.create_run("go", workspace=workspace)
    outs = [e.output for e in await collect(r1) if isinstance(e, ToolUpdate) and e.status == "failed"]
    assert outs and (outs[0] or "").startswith("task_depth: sub-agents may nest 1 level(s) deep")
    two = AgentKernel(ScriptedProvider(deep), config=KernelConfig(mode="ask", max_subagent_depth=2))
    r2 = two.create_run("go", workspace=workspace)
    got = await collect(r2)
    assert (await r2.result()).status == "settled"
    subs = [e for e in got if isinstance(e, SubRunEvent)]
    starts = [e.event for e in subs if isinstance(e.event, RunStart)]
    assert len(starts) == 2 and starts[1].parent_run_id == starts[0].run_id  # flat: each names its own parent
    assert [e.parent_run_id for e in subs if isinstance(e.event, RunStart)] == [r2.run_id, starts[0].run_id]
    answers = [e.output for e in got if isinstance(e, ToolUpdate) and e.status == "completed"]
    assert answers == ["nested"]  # the top run's task result: the depth-1 agent's answer


async def test_cancelling_the_parent_cancels_the_sub_run_mid_command(workspace: Path, tmp_path: Path) -> None:
    script = _script(
        [
            [{"tool": "task", "args": {"description": "Wait", "prompt": "wait", "tools": ["bash"]}}],
            [{"text": "never"}],
        ],
        {"wait": [[{"tool": "bash", "args": {"command": "echo started; sleep 60"}}], [{"text": "slept"}]]},
        tmp_path,
    )
    kernel = AgentKernel(
        ScriptedProvider(script), config=KernelConfig(mode="full"), store=InMemorySessionStore()
    )
    run = kernel.create_run("go", workspace=workspace)
    events: list[Any] = []

    async def consume() -> None:
        async for e in run:
            events.append(e)
            inner_e = e.event if isinstance(e, SubRunEvent) else None
            if isinstance(inner_e, ToolUpdate) and "started" in (inner_e.output or ""):
                run.cancel()

    await asyncio.wait_for(consume(), 60)
    result = await run.result()
    assert result.status == "cancelled"
    sub_end = [e.event for e in events if isinstance(e, SubRunEvent) and isinstance(e.event, RunEnd)]
    assert [e.result.status for e in sub_end] == ["cancelled"]
    task_final = [e for e in events if isinstance(e, ToolUpdate) and e.status == "failed"]
    assert task_final and task_final[-1].output == "cancelled: the run was cancelled"
    # order: the sub-run's end, then the task call's final update, then the parent's end
    assert events.index(
        next(e for e in events if isinstance(e, SubRunEvent) and isinstance(e.event, RunEnd))
    ) < (events.index(task_final[-1]))
    assert isinstance(events[-1], RunEnd) and run.pending_permissions == ()


async def test_a_long_sub_agent_compacts_its_own_context(workspace: Path, tmp_path: Path) -> None:
    """Sub-runs get compaction like any run: the checkpoint sits on the sub-agent's branch and covers only its own
    entries (from its `subrun` marker on), never the parent's conversation."""
    from kgent.core.events import CompactionEvent

    (workspace / "big.txt").write_text("lorem ipsum dolor sit amet\n" * 120)
    reads = [[{"text": f"step {i}"}, {"tool": "read", "args": {"path": "big.txt"}}] for i in range(10)]
    script = _script(
        [
            [
                {"text": "the parent's own words " * 40},
                {"tool": "task", "args": {"description": "Read", "prompt": "r"}},
            ],
            [{"text": "done"}],
        ],
        {"r": [*reads, [{"text": "read it ten times"}]]},
        tmp_path,
    )
    kernel = AgentKernel(
        ScriptedProvider(script),
        config=KernelConfig(mode="full", context_window=3000, reserve_tokens=500, keep_recent_tokens=800),
    )
    run = kernel.create_run("go", workspace=workspace)
    events = await collect(run)
    result = await run.result()
    assert result.status == "settled" and result.text == "done"
    sub = inner(events)
    compactions = [e for e in sub if isinstance(e, CompactionEvent) and e.status == "completed"]
    assert compactions and all(c.trigger == "automatic" for c in compactions)
    assert sub[-1].result.status == "settled" and sub[-1].result.text == "read it ten times"
    assert not [
        e for e in events if isinstance(e, CompactionEvent)
    ]  # the parent's own stream compacted nothing
    tree = await kernel.store.load(result.session_id)
    [marker] = [e for e in tree.entries.values() if e.type == "subrun"]
    checkpoints = [e for e in tree.entries.values() if e.type == "compaction"]
    assert len(checkpoints) == len(compactions)
    for checkpoint in checkpoints:  # on the sub-agent's branch, after its marker
        branch_ids = [e.id for e in tree.branch(checkpoint.id)]
        assert marker.id in branch_ids and branch_ids.index(marker.id) < branch_ids.index(checkpoint.id)
        assert "the parent's own words" not in str(
            checkpoint.data
        )  # its summary is of the sub-agent's work only


async def test_the_parent_names_the_sub_run_before_its_first_event(make_kernel, workspace: Path) -> None:
    """A host reading the parent's own events only (the web client's session stream) learns the sub-run's id from an
    `in_progress` update of the task call, sent before any of the sub-run's events."""
    kernel: AgentKernel = make_kernel("task", mode="ask")
    run = kernel.create_run("what does sample.py print?", workspace=workspace)
    events = await collect(run, "allow_once")
    [task_call] = [e for e in events if isinstance(e, ToolCallEvent)]
    first_sub = next(i for i, e in enumerate(events) if isinstance(e, SubRunEvent))
    named = [
        (i, e)
        for i, e in enumerate(events)
        if isinstance(e, ToolUpdate) and e.tool_call_id == task_call.tool_call_id and "runId" in e.details
    ]
    (at, announce), done = named[0], named[-1]
    assert at < first_sub and announce.status == "in_progress"
    assert announce.details == {"runId": events[first_sub].run_id, "agent": "Check sample.py"}
    assert done[1].status == "completed" and done[1].details["runId"] == events[first_sub].run_id
