"""Sub-agents side by side: one turn's `task` calls run concurrently (at most `max_parallel_subagents` at once), each
sub-run's events tagged with its own run and interleaved live, each sub-agent's approvals asked (several open at once)
naming it; results still go back in call order; a cancel of the parent ends them all; their costs add up to the
parent's and share its cost limit.

No clock: concurrency is proven by approvals that stay open until the test answers them, so that three prompts open at
once can only come from three sub-agents live at once (run one at a time, the first would wait forever and the
bounded wait for the third prompt fails)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from helpers import SUB_AGENTS as NAMES
from helpers import eventually, three_asking_sub_agents
from kgent.core.errors import ConfigError
from kgent.core.events import (
    Event,
    PermissionRequest,
    RunEnd,
    RunStart,
    SubRunEvent,
    ToolCallEvent,
    ToolUpdate,
)
from kgent.core.messages import ToolResultMessage, UserMessage
from kgent.kernel import AgentKernel, AgentRun, KernelConfig
from kgent.kernel.config import parallel_subagents
from kgent.providers.pricing import Price, PriceTable
from kgent.providers.scripted import ScriptedProvider


def _script(tmp_path: Path, turns: list[Any], prompts: dict[str, Any]) -> str:
    path = tmp_path / "parallel.json"
    path.write_text(json.dumps({"turns": turns, "prompts": prompts}))
    return str(path)


def asking_script(tmp_path: Path) -> str:
    """Three `task` calls in one turn; each sub-agent runs one command (asked in `ask` mode), then answers."""
    return three_asking_sub_agents(tmp_path / "parallel.json")


class Watch:
    """Consume a run's events in the background without answering its prompts (the test does)."""

    def __init__(self, run: AgentRun) -> None:
        self.run = run
        self.events: list[Event] = []
        self.task = asyncio.ensure_future(self._consume())

    async def _consume(self) -> None:
        async for event in self.run:
            self.events.append(event)

    def prompts(self) -> list[SubRunEvent]:
        """The sub-agents' permission requests so far, as they came (wrapped: their sub-run's id on each)."""
        return [
            e for e in self.events if isinstance(e, SubRunEvent) and isinstance(e.event, PermissionRequest)
        ]

    def starts(self) -> dict[str, RunStart]:
        """Sub-run id → its run_start."""
        return {
            e.run_id: e.event
            for e in self.events
            if isinstance(e, SubRunEvent) and isinstance(e.event, RunStart)
        }

    def answer(self, wrapped: SubRunEvent, option: str = "allow_once") -> None:
        assert isinstance(wrapped.event, PermissionRequest)
        assert self.run.resolve_permission(wrapped.event.request_id, option)

    async def end(self) -> list[Event]:
        await asyncio.wait_for(self.task, 60)
        return self.events


def most_live_at_once(events: list[Event]) -> int:
    """The most sub-runs that had started and not yet ended at any point of the stream."""
    live, most = set(), 0
    for e in events:
        if isinstance(e, SubRunEvent) and isinstance(e.event, RunStart):
            live.add(e.run_id)
            most = max(most, len(live))
        elif isinstance(e, SubRunEvent) and isinstance(e.event, RunEnd):
            live.discard(e.run_id)
    return most


def _kernel(script: str, **config: Any) -> AgentKernel:
    return AgentKernel(ScriptedProvider(script), config=KernelConfig(**config))


async def test_three_task_calls_run_side_by_side_each_asking_in_its_own_name(
    workspace: Path, tmp_path: Path
) -> None:
    kernel = _kernel(asking_script(tmp_path), mode="ask")
    run = kernel.create_run("do three jobs", workspace=workspace)
    watch = Watch(run)
    # all three sub-agents wait for an approval at the same time: they are live at once
    await eventually(lambda: len(watch.prompts()) == 3, "three approvals open at once")
    assert len(run.pending_permissions) == 3
    starts = watch.starts()
    assert sorted(s.agent or "" for s in starts.values()) == sorted(NAMES)
    assert all(s.parent_run_id == run.run_id for s in starts.values())
    # each approval is its own sub-agent's: the wrapping names its sub-run, whose run_start names the same agent
    for wrapped in watch.prompts():
        request = wrapped.event
        assert isinstance(request, PermissionRequest)
        assert wrapped.parent_run_id == run.run_id
        assert request.agent == starts[wrapped.run_id].agent
        assert request.request_id.startswith(f"{wrapped.run_id}:perm:")  # unique across the sub-runs
    # the second task's sub-agent asks as the second, from its own run
    [beta] = [w for w in watch.prompts() if w.event.agent == "Beta"]  # type: ignore[union-attr]
    assert starts[beta.run_id].agent == "Beta" and starts[beta.run_id].parent_tool_call_id == "t1"
    assert beta.event.tool_call.command == "python3 -c 'print(\"Beta\")'"  # type: ignore[union-attr]
    assert len({w.run_id for w in watch.prompts()}) == 3

    for wrapped in reversed(watch.prompts()):  # answered last to first: they finish out of call order
        watch.answer(wrapped)
    events = await watch.end()
    result = await run.result()
    assert result.status == "settled" and result.text == "All three are done."

    # the sub-runs' events interleave live: the second started before the first ended
    index = {
        rid: [i for i, e in enumerate(events) if isinstance(e, SubRunEvent) and e.run_id == rid]
        for rid in starts
    }
    by_agent = {s.agent: rid for rid, s in starts.items()}
    assert index[by_agent["Beta"]][0] < index[by_agent["Alpha"]][-1]
    assert index[by_agent["Gamma"]][0] < index[by_agent["Beta"]][-1]
    assert most_live_at_once(events) == 3
    # every sub-run's events are its own: each ends with its own run_end, the parent's run_end is the last event
    for rid in starts:
        last = events[index[rid][-1]]
        assert isinstance(last, SubRunEvent) and isinstance(last.event, RunEnd)
        assert last.event.result.run_id == rid and last.event.result.status == "settled"
    assert isinstance(events[-1], RunEnd) and events[-1].result.run_id == run.run_id

    # the model gets the results in its call order, and the session holds them so
    provider = kernel.provider
    assert isinstance(provider, ScriptedProvider)
    final = [r for r in provider.requests if r.messages[0] == UserMessage(text="do three jobs")][-1]
    results = [m for m in final.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.content) for r in results] == [
        (f"t{i}", f"{n} is done.") for i, n in enumerate(NAMES)
    ]
    tree = await kernel.store.load(result.session_id)
    stored = [
        e.data["message"]["toolCallId"]
        for e in tree.branch(tree.leaf_id)
        if e.type == "message" and e.data["message"]["role"] == "tool"
    ]
    assert stored == ["t0", "t1", "t2"]
    # each sub-run on its own branch off the task calls' message
    markers = [e for e in tree.entries.values() if e.type == "subrun"]
    assert {m.data["runId"] for m in markers} == set(starts) and len({m.parent_id for m in markers}) == 1


async def test_no_more_sub_agents_run_at_once_than_the_bound(workspace: Path, tmp_path: Path) -> None:
    kernel = _kernel(asking_script(tmp_path), mode="ask", max_parallel_subagents=2)
    run = kernel.create_run("do three jobs", workspace=workspace)
    watch = Watch(run)
    await eventually(lambda: len(watch.prompts()) == 2, "two approvals open at once")
    # the bound is reached, and the third waits for a slot: announced, not started
    assert len(watch.starts()) == 2
    own = [e for e in watch.events if not isinstance(e, SubRunEvent)]
    assert [e.tool_call_id for e in own if isinstance(e, ToolCallEvent)] == ["t0", "t1", "t2"]
    started = {e.tool_call_id for e in own if isinstance(e, ToolUpdate) and e.status == "in_progress"}
    assert started == {"t0", "t1"}
    first_two = watch.prompts()
    for wrapped in first_two:
        watch.answer(wrapped)
    await eventually(lambda: len(watch.prompts()) == 3, "the third sub-agent's approval")
    third = watch.prompts()[-1]
    assert third.event.agent == "Gamma"  # type: ignore[union-attr]
    watch.answer(third)
    events = await watch.end()
    assert (await run.result()).status == "settled"
    assert most_live_at_once(events) == 2
    finals = [e for e in events if isinstance(e, ToolUpdate) and e.status == "completed"]
    assert sorted(e.output or "" for e in finals) == sorted(f"{n} is done." for n in NAMES)


async def test_one_at_a_time_when_the_bound_is_one(workspace: Path, tmp_path: Path) -> None:
    kernel = _kernel(asking_script(tmp_path), mode="ask", max_parallel_subagents=1)
    run = kernel.create_run("do three jobs", workspace=workspace)
    watch = Watch(run)
    for n in range(1, 4):
        await eventually(lambda n=n: len(watch.prompts()) == n, f"approval {n}")
        assert len(watch.starts()) == n and len(run.pending_permissions) == 1
        watch.answer(watch.prompts()[-1])
    events = await watch.end()
    assert most_live_at_once(events) == 1
    assert [s.agent for s in watch.starts().values()] == list(NAMES)


def test_the_bound_comes_from_kgent_max_subagents() -> None:
    assert parallel_subagents({}) == 3 == KernelConfig().max_parallel_subagents
    assert parallel_subagents({"KGENT_MAX_SUBAGENTS": " 5 "}) == 5
    for bad in ("0", "-2", "two", "1.5"):
        with pytest.raises(ConfigError, match="KGENT_MAX_SUBAGENTS"):
            parallel_subagents({"KGENT_MAX_SUBAGENTS": bad})
    with pytest.raises(ConfigError, match="max_parallel_subagents"):
        KernelConfig(max_parallel_subagents=0)


async def test_a_mixed_batch_runs_tasks_together_and_other_calls_in_order(
    workspace: Path, tmp_path: Path
) -> None:
    """write, task, task, write: the writes keep their places (the first before the sub-agents start, the second
    after both ended); the two tasks run side by side."""
    calls = [
        {"tool": "write", "id": "w1", "args": {"path": "first.txt", "content": "1\n"}},
        {
            "tool": "task",
            "id": "t1",
            "args": {"description": "Alpha", "prompt": "job Alpha", "tools": ["bash"]},
        },
        {
            "tool": "task",
            "id": "t2",
            "args": {"description": "Beta", "prompt": "job Beta", "tools": ["bash"]},
        },
        {"tool": "write", "id": "w2", "args": {"path": "second.txt", "content": "2\n"}},
    ]
    prompts = {
        f"job {n}": [
            [{"tool": "bash", "args": {"command": f"python3 -c 'print(\"{n}\")'"}}],
            [{"text": f"{n} is done."}],
        ]
        for n in ("Alpha", "Beta")
    }
    kernel = _kernel(_script(tmp_path, [calls, [{"text": "ok"}]], prompts), mode="ask")
    run = kernel.create_run("mixed", workspace=workspace)
    watch = Watch(run)
    own_prompts = lambda: [e for e in watch.events if isinstance(e, PermissionRequest)]  # noqa: E731
    await eventually(lambda: len(own_prompts()) == 1, "the first write's approval")
    assert not watch.starts()  # the sub-agents wait for the write before them
    assert run.resolve_permission(own_prompts()[0].request_id, "allow_once")
    await eventually(lambda: len(watch.prompts()) == 2, "both sub-agents asking at once")
    assert len(own_prompts()) == 1  # the write after them waits for them
    for wrapped in watch.prompts():
        watch.answer(wrapped)
    await eventually(lambda: len(own_prompts()) == 2, "the second write's approval")
    ends = [e for e in watch.events if isinstance(e, SubRunEvent) and isinstance(e.event, RunEnd)]
    assert len(ends) == 2
    assert run.resolve_permission(own_prompts()[1].request_id, "allow_once")
    events = await watch.end()
    assert (await run.result()).status == "settled"
    assert (workspace / "first.txt").read_text() == "1\n" and (workspace / "second.txt").read_text() == "2\n"
    finals = [
        e.tool_call_id
        for e in events
        if isinstance(e, ToolUpdate) and e.status == "completed" and e.tool_call_id in ("w1", "w2")
    ]
    assert finals == ["w1", "w2"]


async def test_cancelling_the_parent_cancels_every_sub_agent(workspace: Path, tmp_path: Path) -> None:
    kernel = _kernel(asking_script(tmp_path), mode="ask")
    run = kernel.create_run("do three jobs", workspace=workspace)
    watch = Watch(run)
    await eventually(lambda: len(watch.prompts()) == 3, "three approvals open at once")
    run.cancel()
    events = await watch.end()
    result = await run.result()
    assert result.status == "cancelled" and run.pending_permissions == ()
    ends = {
        e.run_id: i
        for i, e in enumerate(events)
        if isinstance(e, SubRunEvent) and isinstance(e.event, RunEnd)
    }
    assert set(ends) == set(watch.starts())
    assert all(events[i].event.result.status == "cancelled" for i in ends.values())  # type: ignore[union-attr]
    # each task call fails as cancelled after its sub-run's end, all before the parent's run_end
    failed = {
        e.tool_call_id: i
        for i, e in enumerate(events)
        if isinstance(e, ToolUpdate)
        and e.status == "failed"
        and e.output == "cancelled: the run was cancelled"
    }
    assert set(failed) == {"t0", "t1", "t2"}
    by_call = {s.parent_tool_call_id: rid for rid, s in watch.starts().items()}
    assert all(ends[by_call[call]] < failed[call] for call in failed)
    assert max(failed.values()) < len(events) - 1 and isinstance(events[-1], RunEnd)
    # the session holds a (cancelled) result for every call, in call order
    tree = await kernel.store.load(result.session_id)
    stored = [
        (e.data["message"]["toolCallId"], e.data["message"]["isError"])
        for e in tree.branch(tree.leaf_id)
        if e.type == "message" and e.data["message"]["role"] == "tool"
    ]
    assert stored == [("t0", True), ("t1", True), ("t2", True)]


PRICE = Price(input=10.0, output=100.0, cache_read=1.0, cache_write=10.0)


async def test_the_sub_agents_costs_add_up_to_the_parents(workspace: Path, tmp_path: Path) -> None:
    calls = [
        {"tool": "task", "id": f"t{i}", "args": {"description": n, "prompt": f"job {n}"}}
        for i, n in enumerate(NAMES)
    ]
    usage = {n: {"input": 100 * (i + 1), "output": 10 * (i + 1)} for i, n in enumerate(NAMES)}
    prompts = {f"job {n}": [[{"text": f"{n} is done.", "usage": usage[n]}]] for n in NAMES}
    script = _script(
        tmp_path,
        [
            [*calls, {"usage": {"input": 1000, "output": 50}}],
            [{"text": "ok", "usage": {"input": 2000, "output": 5}}],
        ],
        prompts,
    )
    kernel = AgentKernel(
        ScriptedProvider(script, model="priced"),
        config=KernelConfig(mode="full", prices=PriceTable({"priced": PRICE})),
    )
    run = kernel.create_run("three jobs", workspace=workspace)
    events = await Watch(run).end()
    result = await run.result()
    assert result.status == "settled"
    subs = [e.event.result for e in events if isinstance(e, SubRunEvent) and isinstance(e.event, RunEnd)]
    assert sorted(s.usage["inputTokens"] for s in subs) == [100, 200, 300]
    assert result.usage["inputTokens"] == 1000 + 2000 + 600
    assert result.usage["outputTokens"] == 50 + 5 + 60
    own = (3000 * 10.0 + 55 * 100.0) / 1e6
    assert result.usage["cost"]["amount"] == pytest.approx(own + sum(s.usage["cost"]["amount"] for s in subs))
    assert result.usage["cost"]["amount"] == pytest.approx((3600 * 10.0 + 115 * 100.0) / 1e6)


async def test_sub_agents_side_by_side_share_their_parents_cost_limit(
    workspace: Path, tmp_path: Path
) -> None:
    """Each sub-agent would go on for ever at $0.10 a call; the parent may spend $1 and has spent $0.10. Had each of
    the three been allowed what was left when it started ($0.90), they would spend about $2.70; sharing it, they stop
    together near $0.90 (each check sees its siblings' spending; at most one call each past it)."""
    calls = [
        {"tool": "task", "id": f"t{i}", "args": {"description": n, "prompt": f"job {n}"}}
        for i, n in enumerate(NAMES)
    ]
    per_call = {"input": 10_000, "output": 1}  # $0.1001 at $10 / $100 per million
    forever = [[{"tool": "ls", "args": {}, "usage": per_call}]]
    script = _script(
        tmp_path,
        [[*calls, {"usage": per_call}], [{"text": "never"}]],
        {f"job {n}": forever for n in NAMES},
    )
    kernel = AgentKernel(
        ScriptedProvider(script, model="priced"),
        config=KernelConfig(mode="full", prices=PriceTable({"priced": PRICE}), system_prompt="Be brief."),
    )
    run = kernel.create_run("three jobs", workspace=workspace, cost_limit=1.0)
    events = await Watch(run).end()
    result = await run.result()
    subs = [e.event.result for e in events if isinstance(e, SubRunEvent) and isinstance(e.event, RunEnd)]
    assert len(subs) == 3
    assert all(s.status == "failed" and s.error and s.error["code"] == "cost_limit" for s in subs)
    spent = result.usage["cost"]["amount"]
    assert spent == pytest.approx(0.1001 + sum(s.usage["cost"]["amount"] for s in subs))
    assert 0.9 <= spent <= 1.0 + 3 * 0.1001
    assert result.status == "failed" and result.error and result.error["code"] == "cost_limit"
    # every sub-agent had its share: none was starved by the others
    assert all(s.usage["cost"]["amount"] >= 0.1 for s in subs)
