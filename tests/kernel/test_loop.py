"""The loop end to end on the scripted provider and real tools: ordering, terminal states, permissions."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helpers import collect, types
from kgent.core.errors import ConfigError, RunStateError
from kgent.core.events import (
    MessageDelta,
    PermissionRequest,
    PermissionResolved,
    QueueUpdate,
    RunEnd,
    ToolCallEvent,
    ToolUpdate,
    UserInput,
)
from kgent.core.messages import ToolResultMessage, UserMessage
from kgent.kernel import KernelConfig


async def test_tool_loop_reads_edits_runs_and_settles(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("tool-loop", mode="ask")
    run = kernel.create_run("set value to 2", workspace=workspace)
    events = await collect(run, "allow_once")
    result = await run.result()

    assert result.status == "settled" and result.stop_reason == "end"
    assert (workspace / "sample.py").read_text() == "value = 2\nprint(value)\n"
    assert result.changed_paths == ("sample.py",)
    assert "-value = 1" in result.patch and "+value = 2" in result.patch
    assert types(events)[:2] == ["run_start", "user_message"]
    assert types(events)[-1] == "run_end" and types(events).count("run_end") == 1
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [c.name for c in calls] == ["read", "edit", "bash"]
    asked = [e for e in events if isinstance(e, PermissionRequest)]
    assert [a.tool_call.name for a in asked] == ["edit", "bash"]  # reads are not asked in ask mode
    assert "+value = 2" in asked[0].tool_call.preview.diff
    assert asked[0].tool_call.preview.new_text == "value = 2\nprint(value)\n"
    # each call: tool_call, then (approval), then in_progress, then completed — in that order
    seq = types(events)
    edit_at = seq.index("tool_call", seq.index("tool_call") + 1)
    assert seq[edit_at : edit_at + 4] == [
        "tool_call",
        "permission_request",
        "permission_resolved",
        "tool_update",
    ]
    bash_done = [e for e in events if isinstance(e, ToolUpdate) and e.status == "completed"][-1]
    assert "2" in (bash_done.output or "")
    assert result.text.startswith("Updated sample.py")
    assert "".join(e.delta for e in events if isinstance(e, MessageDelta) and e.kind == "text").endswith(
        result.text
    )


async def test_denied_call_becomes_permission_denied_result_and_loop_continues(
    make_kernel, workspace: Path
) -> None:
    kernel = make_kernel("tool-loop", mode="ask")
    run = kernel.create_run("set value", workspace=workspace)
    await collect(run, "reject_once")
    result = await run.result()
    assert result.status == "settled"
    assert (workspace / "sample.py").read_text() == "value = 1\nprint(value)\n"
    tool_results = [m for m in kernel.provider.requests[-1].messages if isinstance(m, ToolResultMessage)]
    denied = [m for m in tool_results if m.content.startswith("permission_denied:")]
    assert [m.name for m in denied] == ["edit", "bash"] and all(m.is_error for m in denied)
    assert result.patch == "" and result.changed_paths == ()


async def test_plan_mode_denies_writes_without_asking(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("tool-loop", mode="plan")
    run = kernel.create_run("set value", workspace=workspace)
    events = await collect(run, lambda r: pytest.fail("plan mode must not ask"))
    assert not [e for e in events if isinstance(e, PermissionRequest)]
    resolved = [e for e in events if isinstance(e, PermissionResolved)]
    assert [(r.decision, r.source, r.approved) for r in resolved] == [("reject_once", "policy", False)] * 2
    assert (workspace / "sample.py").read_text().startswith("value = 1")


async def test_full_mode_asks_nothing(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("tool-loop", mode="full")
    run = kernel.create_run("set value", workspace=workspace)
    events = await collect(run, lambda r: pytest.fail("full mode must not ask"))
    assert (await run.result()).status == "settled"
    assert not [e for e in events if isinstance(e, PermissionRequest | PermissionResolved)]


async def test_allow_always_is_remembered_but_allow_once_asks_again(make_kernel, workspace: Path) -> None:
    once = make_kernel("two-writes", mode="ask")
    events = await collect(once.create_run("write", workspace=workspace), "allow_once")
    asked = [e for e in events if isinstance(e, PermissionRequest)]
    assert len(asked) == 2  # the second write has other arguments: asked again
    assert asked[0].request_id != asked[1].request_id

    always = make_kernel("two-writes", mode="ask")
    events = await collect(always.create_run("write", workspace=workspace), "allow_always")
    assert len([e for e in events if isinstance(e, PermissionRequest)]) == 1
    assert [r.source for r in events if isinstance(r, PermissionResolved)] == ["host", "session_rule"]
    assert (workspace / "notes.txt").read_text() == "second\n"


async def test_reject_always_denies_the_next_matching_call_unasked(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("two-writes", mode="ask")
    events = await collect(kernel.create_run("write", workspace=workspace), "reject_always")
    assert len([e for e in events if isinstance(e, PermissionRequest)]) == 1
    assert not (workspace / "notes.txt").exists()


async def test_unknown_option_is_a_reject(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("two-writes", mode="ask")
    await collect(kernel.create_run("write", workspace=workspace), "yes please")
    assert not (workspace / "notes.txt").exists()


async def test_stale_permission_id_is_refused(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("two-writes", mode="ask")
    run = kernel.create_run("write", workspace=workspace)
    asked = 0
    async for event in run:
        if isinstance(event, PermissionRequest):
            asked += 1
            assert run.resolve_permission(event.request_id + "x", "allow_once") is False
            assert run.resolve_permission(event.request_id, "allow_once") is True
            assert run.resolve_permission(event.request_id, "allow_once") is False
    assert asked == 2


async def test_approval_timeout_rejects(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("two-writes", mode="ask", approval_timeout=0.05)
    run = kernel.create_run("write", workspace=workspace)
    events = [e async for e in run]  # nobody answers
    resolved = [e for e in events if isinstance(e, PermissionResolved)]
    assert [r.source for r in resolved] == ["timeout", "timeout"] and not any(r.approved for r in resolved)
    assert (await run.result()).status == "settled"


async def test_unknown_tool_and_bad_arguments_are_error_results(make_kernel, workspace: Path) -> None:
    script = [
        [
            {"tool": "missing", "args": {}},
            {"tool": "read", "args": {}},
            {"tool": "read", "args": {"path": 3}},
        ],
        [{"text": "done"}],
    ]
    kernel = make_kernel(script, mode="full")
    run = kernel.create_run("go", workspace=workspace)
    await collect(run)
    results = [m for m in kernel.provider.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [True, True, True]
    assert results[0].content == "Unknown tool: missing"
    assert results[1].content.startswith("invalid_arguments: missing required argument(s): path")
    assert "must be of type string" in results[2].content
    assert (await run.result()).status == "settled"


async def test_provider_error_fails_the_run_with_one_terminal_event(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("provider-error")
    run = kernel.create_run("go", workspace=workspace)
    events = await collect(run)
    result = await run.result()
    assert result.status == "failed" and result.error == {
        "code": "scripted_error",
        "message": "The scripted provider failed.",
    }
    assert types(events).count("run_end") == 1 and events[-1].type == "run_end"


async def test_max_turns_fails(make_kernel, workspace: Path) -> None:
    kernel = make_kernel([[{"tool": "ls", "args": {}}]], mode="full", max_turns=3)
    run = kernel.create_run("loop forever", workspace=workspace)
    await collect(run)
    result = await run.result()
    assert result.status == "failed" and result.error["code"] == "max_turns" and result.turns == 3


async def test_a_runs_own_max_turns_wins_over_the_kernels(make_kernel, workspace: Path) -> None:
    kernel = make_kernel([[{"tool": "ls", "args": {}}]], mode="full", max_turns=3)
    result = await kernel.create_run("loop", workspace=workspace, max_turns=5).result()
    assert (result.status, result.stop_reason, result.turns) == ("failed", "max_turns", 5)
    assert "exceeded 5 model turns" in result.error["message"]
    with pytest.raises(ConfigError, match="max turns must be a positive integer"):
        kernel.create_run("loop", workspace=workspace, max_turns=0)


def test_the_turn_limit_fits_real_tasks_and_comes_from_the_environment() -> None:
    from kgent.config import max_turns

    assert KernelConfig().max_turns >= 200 and max_turns({}) >= 200
    assert max_turns({"KGENT_MAX_TURNS": "400"}) == 400
    assert max_turns({"KGENT_MAX_TURNS": "400"}, explicit=7) == 7  # a flag or a run's param wins
    for bad in ("0", "-3", "many", "2.5"):
        with pytest.raises(ConfigError, match="KGENT_MAX_TURNS must be a positive integer"):
            max_turns({"KGENT_MAX_TURNS": bad})
    with pytest.raises(ConfigError, match="max turns must be a positive integer"):
        max_turns({}, explicit=0)


async def test_cancel_mid_model_stream(make_kernel, workspace: Path) -> None:
    kernel = make_kernel([[{"text": "Thinking slowly"}, {"sleep": 60}, {"text": " ... done."}]])
    run = kernel.create_run("go", workspace=workspace)
    events = []
    async for event in run:
        events.append(event)
        if isinstance(event, MessageDelta):
            run.cancel()
            run.cancel()  # idempotent
    result = await run.result()
    assert result.status == "cancelled" and result.stop_reason == "cancelled"
    assert isinstance(events[-1], RunEnd) and types(events).count("run_end") == 1


async def test_cancel_mid_bash_kills_the_process_group(make_kernel, workspace: Path) -> None:
    import os
    import time

    script = [
        [{"tool": "bash", "args": {"command": "echo pgid=$$; sleep 60 & sleep 60; wait"}}],
        [{"text": "x"}],
    ]
    kernel = make_kernel(script, mode="full")
    run = kernel.create_run("go", workspace=workspace)
    pgid = None
    async for event in run:
        if isinstance(event, ToolUpdate) and event.output and "pgid=" in event.output and pgid is None:
            pgid = int(event.output.split("pgid=")[1].split()[0])
            run.cancel()
    result = await run.result()
    assert result.status == "cancelled"
    assert pgid is not None
    # killed at once; init may take a moment to reap the orphaned background sleep (a zombie still "exists")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.05)
    with pytest.raises(ProcessLookupError):
        os.killpg(pgid, 0)
    # the session has a result for the cancelled call: a resumed run sees no dangling tool call
    tree = await kernel.store.load(result.session_id)
    kinds = [e.data["message"]["role"] for e in tree.branch() if e.type == "message"]
    assert kinds[-2:] == ["assistant", "tool"]


async def test_steering_is_delivered_after_the_current_batch(make_kernel, workspace: Path) -> None:
    script = [
        [
            {"tool": "bash", "args": {"command": "sleep 0.3; echo one"}},
            {"tool": "bash", "args": {"command": "echo two"}},
        ],
        [{"text": "ok"}],
    ]
    kernel = make_kernel(script, mode="full")
    run = kernel.create_run("go", workspace=workspace)
    events, steered = [], False
    async for event in run:
        events.append(event)
        if isinstance(event, ToolUpdate) and event.status == "in_progress" and not steered:
            steered = True
            run.steer("also mention three")
    result = await run.result()
    assert result.status == "settled"
    # both calls of the batch completed (unlike Pi, which skips the rest), then the steer, then the next request
    done = [i for i, e in enumerate(events) if isinstance(e, ToolUpdate) and e.status == "completed"]
    steer_at = next(i for i, e in enumerate(events) if isinstance(e, UserInput) and e.source == "steer")
    assert done[0] < done[1] < steer_at
    second_request = kernel.provider.requests[1].messages
    assert isinstance(second_request[-1], UserMessage) and second_request[-1].text == "also mention three"
    assert [type(m).__name__ for m in second_request[-3:]] == [
        "ToolResultMessage",
        "ToolResultMessage",
        "UserMessage",
    ]
    assert "queue_update" in types(events)


async def test_follow_up_runs_after_the_run_would_settle(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("slow-answer")
    run = kernel.create_run("first", workspace=workspace)
    run.follow_up("second")
    events = await collect(run)
    result = await run.result()
    assert result.status == "settled"
    inputs = [(e.source, e.text) for e in events if isinstance(e, UserInput)]
    assert inputs == [("prompt", "first"), ("follow_up", "second")]
    assert len(kernel.provider.requests) == 2


async def test_a_cleared_queue_never_reaches_the_model(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("slow-answer")
    run = kernel.create_run("first", workspace=workspace)
    run.steer("steer me")
    run.follow_up("second")
    run.clear_queue()
    events = await collect(run)
    assert (await run.result()).status == "settled"
    assert [(e.source, e.text) for e in events if isinstance(e, UserInput)] == [("prompt", "first")]
    queues = [(e.steering, e.follow_up) for e in events if isinstance(e, QueueUpdate)]
    assert queues == [(("steer me",), ()), (("steer me",), ("second",)), ((), ())]
    assert len(kernel.provider.requests) == 1
    with pytest.raises(RunStateError):
        run.clear_queue()


async def test_one_consumer_and_one_live_run_per_session(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("slow-answer")
    run = kernel.create_run("go", workspace=workspace)
    iterator = run.__aiter__()
    with pytest.raises(RunStateError):
        run.__aiter__()
    with pytest.raises(RunStateError):
        kernel.create_run("again", workspace=workspace, session_id=run.session_id)
    async for _ in iterator:
        pass
    with pytest.raises(RunStateError):
        run.steer("late")


async def test_resume_continues_the_session_history(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("hello")
    first = kernel.create_run("one", workspace=workspace)
    await collect(first)
    sid = (await first.result()).session_id
    second = kernel.create_run("two", workspace=workspace, session_id=sid)
    await collect(second)
    texts = [m.text for m in kernel.provider.requests[-1].messages if isinstance(m, UserMessage)]
    assert texts == ["one", "two"]


async def test_parallel_read_only_batch_overlaps_and_keeps_call_order(workspace: Path) -> None:
    from kgent.kernel import AgentKernel, KernelConfig
    from kgent.providers.scripted import ScriptedProvider
    from kgent.tools.base import CallDescription, ToolOutput

    log: list[str] = []
    ended = {"first": asyncio.Event(), "second": asyncio.Event()}

    class Slow:
        name, description, kind, read_only = "slow", "waits", "read", True
        parameters = {
            "type": "object",
            "properties": {"id": {"type": "string"}, "after": {"type": "string"}},
            "required": ["id"],
        }

        def describe(self, args, ctx):
            return CallDescription(title=f"slow {args['id']}")

        async def preview(self, args, ctx):
            return None

        async def run(self, args, ctx):
            log.append(f"start {args['id']}")
            if "after" in args:  # ends only once the other call has: run one after the other, it never would
                await asyncio.wait_for(ended[args["after"]].wait(), 30)
            log.append(f"end {args['id']}")
            ended[args["id"]].set()
            return ToolOutput(content=f"done {args['id']}")

    script = [
        [
            {"tool": "slow", "args": {"id": "first", "after": "second"}},
            {"tool": "slow", "args": {"id": "second"}},
        ],
        [{"text": "ok"}],
    ]
    kernel = AgentKernel(ScriptedProvider(script), tools=[Slow()], config=KernelConfig(mode="full"))
    run = kernel.create_run("go", workspace=workspace)
    await collect(run)
    assert log == ["start first", "start second", "end second", "end first"]  # overlapped
    results = [m for m in kernel.provider.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert [r.content for r in results] == ["done first", "done second"]  # call order


async def test_long_scripted_run_compacts_automatically(make_kernel, workspace: Path) -> None:
    from kgent.core.events import CompactionEvent

    (workspace / "big.txt").write_text("lorem ipsum dolor sit amet\n" * 120)
    script = [[{"text": f"step {i}"}, {"tool": "read", "args": {"path": "big.txt"}}] for i in range(10)]
    script.append([{"text": "all steps done"}])
    kernel = make_kernel(script, mode="full", context_window=3000, reserve_tokens=500, keep_recent_tokens=800)
    run = kernel.create_run("read big.txt ten times", workspace=workspace)
    events = await collect(run)
    result = await run.result()
    assert result.status == "settled" and result.text == "all steps done"
    compactions = [e for e in events if isinstance(e, CompactionEvent) and e.status == "completed"]
    assert compactions and all(c.trigger == "automatic" for c in compactions)
    tree = await kernel.store.load(result.session_id)
    checkpoints = [e for e in tree.branch() if e.type == "compaction"]
    assert len(checkpoints) == len(compactions)
    assert checkpoints[-1].data["summary"].startswith("## Goal")
    # the script went on where it was: ten reads, then the answer, never replayed
    reads = [e for e in events if isinstance(e, ToolCallEvent)]
    assert len(reads) == 10


async def test_cancel_while_an_approval_is_pending_ends_the_call_in_the_stream(
    make_kernel, workspace: Path
) -> None:
    kernel = make_kernel("two-writes", mode="ask")
    run = kernel.create_run("write", workspace=workspace)
    events = []
    async for event in run:
        events.append(event)
        if isinstance(event, PermissionRequest):
            run.cancel()
    assert (await run.result()).status == "cancelled"
    call_id = next(e.tool_call_id for e in events if isinstance(e, ToolCallEvent))
    final = [e for e in events if isinstance(e, ToolUpdate) and e.tool_call_id == call_id]
    assert [(u.status, u.is_error) for u in final] == [("failed", True)]
    assert run.pending_permissions == ()
    assert not (workspace / "notes.txt").exists()


async def test_an_approval_holds_only_for_the_arguments_it_was_given_for(
    make_kernel, workspace: Path
) -> None:
    # The request's args are what the person judged; if they differ from what would run, the call does not run.
    script = [[{"tool": "write", "args": {"path": "notes.txt", "content": "approved\n"}}], [{"text": "ok"}]]
    kernel = make_kernel(script, mode="ask")
    run = kernel.create_run("write", workspace=workspace)

    def tamper_then_allow(request: PermissionRequest) -> str:
        request.tool_call.args["path"] = "other.txt"
        return "allow_once"

    events = await collect(run, tamper_then_allow)
    assert not (workspace / "notes.txt").exists() and not (workspace / "other.txt").exists()
    failed = [e for e in events if isinstance(e, ToolUpdate) and e.status == "failed"]
    assert [e.output for e in failed] == ["permission_denied: the arguments changed after they were approved"]
    assert (await run.result()).status == "settled"


async def test_after_the_loop_finished_follow_ups_are_refused_and_cancel_keeps_the_result(
    workspace: Path,
) -> None:
    # Between the last model answer and run_end the run still computes its patch; a message sent then must not be
    # accepted and dropped: the host learns the run has ended and starts a new one.
    from kgent.changes.tracker import ChangeTracker
    from kgent.kernel import AgentKernel, KernelConfig
    from kgent.providers.scripted import ScriptedProvider

    finishing, release = asyncio.Event(), asyncio.Event()

    class SlowTracker(ChangeTracker):
        async def finish(self):  # type: ignore[no-untyped-def]
            finishing.set()
            await release.wait()  # until the test has tried its messages
            return await super().finish()

    class Kernel(AgentKernel):
        def change_tracker(self, workspace: Path) -> ChangeTracker:
            return SlowTracker(workspace)

    kernel = Kernel(ScriptedProvider("hello"), config=KernelConfig(mode="full"))
    run = kernel.create_run("hi", workspace=workspace)
    consumer = asyncio.create_task(collect(run))
    await asyncio.wait_for(finishing.wait(), 30)
    assert not run.done
    with pytest.raises(RunStateError) as refused:
        run.follow_up("too late")
    assert refused.value.code == "run_not_live"
    with pytest.raises(RunStateError):
        run.steer("too late")
    run.cancel()  # too late as well: the run already settled; it must not turn into a failure or lose its report
    release.set()
    events = await consumer
    result = await run.result()
    assert result.status == "settled" and result.error is None
    assert types(events).count("run_end") == 1


async def test_a_run_cancelled_at_once_still_leaves_its_session(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("hello")
    run = kernel.create_run("go", workspace=workspace)
    run.cancel()
    assert (await run.result()).status == "cancelled"
    tree = await kernel.store.load(run.session_id)  # the id the host was given names a real session
    assert [e.type for e in tree.branch()][:1] == ["config"]
    again = kernel.create_run("again", workspace=workspace, session_id=run.session_id)
    assert (await again.result()).status == "settled"


async def test_a_resume_that_changes_the_mode_records_it(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("hello", mode="ask")
    first = kernel.create_run("one", workspace=workspace)
    await collect(first)
    same = kernel.create_run("two", workspace=workspace, session_id=first.session_id)
    await collect(same)
    other = kernel.create_run("three", workspace=workspace, session_id=first.session_id, mode="plan")
    await collect(other)
    tree = await kernel.store.load(first.session_id)
    assert [e.data["mode"] for e in tree.branch() if e.type == "config"] == ["ask", "plan"]


async def test_repeated_tool_call_ids_still_get_one_result_each(make_kernel, workspace: Path) -> None:
    script = [
        [
            {"tool": "ls", "args": {}, "id": "dup"},
            {"tool": "calculator", "args": {"expression": "6*7"}, "id": "dup"},
        ],
        [{"text": "done"}],
    ]
    kernel = make_kernel(script, mode="full")
    run = kernel.create_run("go", workspace=workspace)
    await collect(run)
    results = [m for m in kernel.provider.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert [r.name for r in results] == ["ls", "calculator"]
    assert len({r.tool_call_id for r in results}) == 2 and results[1].content == "42"


async def test_the_change_baseline_overlaps_the_first_model_call_and_tools_wait_for_it(
    make_kernel, workspace: Path
) -> None:
    class HeldStart:
        """A ChangeTracking whose baseline completes only when the test says so."""

        def __init__(self) -> None:
            self.release = asyncio.Event()
            self.order: list[str] = []

        async def start(self) -> None:
            await self.release.wait()
            self.order.append("baseline")

        async def record_before(self, abs_path: Path, fs: object) -> None:
            self.order.append("write")

        async def finish(self) -> tuple[tuple[str, ...], str]:
            return (), ""

    tracker = HeldStart()
    script = [[{"tool": "write", "args": {"path": "a.txt", "content": "x\n"}}], [{"text": "Done."}]]
    kernel = make_kernel(script, mode="full")
    kernel.change_tracker = lambda ws: tracker
    run = kernel.create_run("write a.txt", workspace=workspace)
    async for event in run:
        if event.type == "message_end" and not tracker.release.is_set():
            assert tracker.order == []  # the model answered while the baseline was still being taken
            tracker.release.set()
    result = await run.result()
    assert result.status == "settled" and tracker.order == ["baseline", "write"]
    assert (workspace / "a.txt").read_text() == "x\n"


async def test_todo_write_plans_and_a_resume_shows_the_plan_again(make_kernel, workspace: Path) -> None:
    from kgent.core.events import PlanEvent

    kernel = make_kernel("plan", mode="plan")
    run = kernel.create_run("what does sample.py print?", workspace=workspace)
    events = await collect(run)
    result = await run.result()
    assert result.status == "settled" and not any(isinstance(e, PermissionRequest) for e in events)
    plans = [e for e in events if isinstance(e, PlanEvent)]
    assert [[(p.content, p.status) for p in plan.entries] for plan in plans] == [
        [("Read sample.py", "in_progress"), ("Explain what it prints", "pending")],
        [("Read sample.py", "completed"), ("Explain what it prints", "in_progress")],
        [("Read sample.py", "completed"), ("Explain what it prints", "completed")],
    ]
    # each plan event comes while its call runs: after the call's tool_call, before its final tool_update
    first = types(events).index("plan")
    assert types(events)[first - 2 : first + 2] == ["tool_call", "tool_update", "plan", "tool_update"]

    again = kernel.create_run("thanks", workspace=workspace, session_id=result.session_id)
    resumed = await collect(again)
    assert types(resumed)[:3] == ["run_start", "plan", "user_message"]
    assert resumed[1] == plans[-1]
    fresh = kernel.create_run("a new session has no plan yet", workspace=workspace)
    assert types(await collect(fresh))[:2] == ["run_start", "user_message"]


async def test_the_rule_files_are_checked_around_every_call_but_kgents_own_reads(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run must not widen its own rules: the rule files and the trust list are compared before and after each call
    that could change them. Kgent's own read, grep, find and ls open files read-only through the gate, so theirs are
    skipped; a write, a command, or an extension's tool that says it reads are checked."""
    from kgent.kernel import AgentKernel
    from kgent.kernel.toolexec import ToolBatch
    from kgent.providers.scripted import ScriptedProvider
    from kgent.tools import CODING_TOOLS
    from kgent.tools.base import ToolIntent, ToolOutput
    from kgent.tools.read import ReadTool

    checked: list[str] = []
    compare = ToolBatch._rule_files

    def counted(self: ToolBatch) -> tuple[tuple[int, int, int] | None, ...]:
        checked.append(self._current)
        return compare(self)

    class ExtensionRead(ReadTool):  # an extension's tool, whatever its intent says
        name = "ext_read"
        intent = ToolIntent(effect="read", path_arg="path", verb="reads")

        async def run(self, args, ctx):
            return ToolOutput(content="read")

    ExtensionRead.__module__ = "some_extension.tools"
    monkeypatch.setattr(ToolBatch, "_rule_files", counted)
    original_run = ToolBatch._run

    async def tagged(self: ToolBatch, ready):
        self._current = ready.call.name
        await original_run(self, ready)

    monkeypatch.setattr(ToolBatch, "_run", tagged)
    (workspace / "a.txt").write_text("a\n")
    script = [
        [{"tool": "read", "args": {"path": "a.txt"}}],
        [{"tool": "grep", "args": {"pattern": "a", "path": "."}}],
        [{"tool": "ls", "args": {"path": "."}}],
        [{"tool": "find", "args": {"pattern": "*.txt"}}],
        [{"tool": "ext_read", "args": {"path": "a.txt"}}],
        [{"tool": "write", "args": {"path": "b.txt", "content": "b\n"}}],
        [{"tool": "bash", "args": {"command": "true"}}],
        [{"text": "done"}],
    ]
    tools = [*CODING_TOOLS(), ExtensionRead()]
    kernel = AgentKernel(ScriptedProvider(script), tools=tools, config=KernelConfig(mode="full"))
    run = kernel.create_run("go", workspace=workspace)
    await collect(run)
    assert (await run.result()).status == "settled"
    assert checked == ["ext_read", "ext_read", "write", "write", "bash", "bash"]
