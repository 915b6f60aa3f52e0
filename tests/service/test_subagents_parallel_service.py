"""Sub-agents side by side through the run port every front uses: each concurrent sub-run is a run of its own on
the port (its RunRef names it and its parent, seq gap-free per sub-run), their events interleave, each one's
approvals are open at the same time and name who asks, a steer or follow-up reaches one named sub-run, and a cancel
of the parent withdraws every prompt and ends every sub-run before the parent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers import SUB_AGENTS as NAMES
from helpers import three_asking_sub_agents
from kgent.core.errors import RunStateError
from kgent.core.events import PermissionRequest, QueueUpdate, RunEnd, RunStart, UserInput
from kgent.core.messages import UserMessage
from kgent.providers.scripted import ScriptedProvider
from kgent.service import wire as W
from kgent.service.handshake import Settings
from kgent.service.runs import Decision, RunHandle
from kgent.service.service import Service
from kgent.testing.ports import MemoryPort


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KGENT_STATE_DIR", str(tmp_path / "state"))
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def script(tmp_path: Path) -> str:
    """Three `task` calls in one turn; each sub-agent runs one command (asked in `ask` mode), then answers."""
    return three_asking_sub_agents(tmp_path / "three.json", "All done.")


async def start(svc: Service, workspace: Path, model: str) -> RunHandle:
    params = {"prompt": "three jobs", "workspace": str(workspace), "model": model, "mode": "ask"}
    handle = await svc.start_run(W.RunParams.parse(params))
    handle.start()
    return handle


def sub_runs(port: MemoryPort, parent: str) -> dict[str, RunStart]:
    """The sub-runs of `parent` seen on the port: run id → its run_start."""
    return {
        rid: events[0][1]
        for rid, events in port.events.items()
        if isinstance(events[0][1], RunStart) and events[0][1].parent_run_id == parent
    }


async def test_concurrent_sub_agents_ask_at_once_each_naming_itself(workspace: Path, tmp_path: Path) -> None:
    port = MemoryPort()  # prompts stay open until answered
    svc = Service({"KGENT_PROVIDER": "scripted"}, Settings(), port)
    handle = await start(svc, workspace, script(tmp_path))
    await port.until(lambda: len(port.asked) == 3)
    subs = sub_runs(port, handle.run_id)
    by_agent = {s.agent: rid for rid, s in subs.items()}
    assert sorted(by_agent) == sorted(NAMES)
    # every prompt comes from its sub-run: the ref names it and its parent, the request names its agent
    for asked in port.asked.values():
        assert asked.ref.parent_run_id == handle.run_id and asked.ref.session_id == handle.session_id
        assert asked.request.agent == subs[asked.ref.run_id].agent
    [beta] = [a for a in port.asked.values() if a.request.agent == "Beta"]
    # the second sub-agent's approval says it comes from the second
    assert beta.ref.run_id == by_agent["Beta"]
    assert beta.request.tool_call.command == "python3 -c 'print(\"Beta\")'"
    # the sub-runs' events interleave on the port: Gamma, answered first, runs to its end while Alpha still waits
    # (Alpha's events fall on both sides of Gamma's run_end), each run with its own gap-free seq from 0
    [gamma_prompt] = [rid for rid, a in port.asked.items() if a.ref.run_id == by_agent["Gamma"]]
    port.answer_now(gamma_prompt, Decision("allow_once"))
    await port.until(lambda: port.ended(by_agent["Gamma"]))
    for rid in list(port.asked):
        port.answer_now(rid, Decision("allow_once"))
    await port.until(lambda: port.ended(handle.run_id))
    gamma_end = port.order.index((by_agent["Gamma"], "event:run_end"))
    alpha_at = [i for i, (rid, _) in enumerate(port.order) if rid == by_agent["Alpha"]]
    assert alpha_at[0] < gamma_end < alpha_at[-1]
    for rid in [*subs, handle.run_id]:
        events = port.events[rid]
        assert [seq for seq, _ in events] == list(range(len(events)))
        assert isinstance(events[-1][1], RunEnd) and events[-1][1].result.status == "settled"
    # each sub-run ended before its parent
    ends = [i for i, (rid, what) in enumerate(port.order) if what == "event:run_end"]
    assert port.order[ends[-1]][0] == handle.run_id and len(ends) == 4
    await svc.close()


async def test_a_steer_or_follow_up_reaches_one_named_sub_agent(workspace: Path, tmp_path: Path) -> None:
    port = MemoryPort()
    svc = Service({"KGENT_PROVIDER": "scripted"}, Settings(), port)
    model = script(tmp_path)
    handle = await start(svc, workspace, model)
    await port.until(lambda: len(port.asked) == 3)
    by_agent = {s.agent: rid for rid, s in sub_runs(port, handle.run_id).items()}
    beta = by_agent["Beta"]
    assert handle.sub_run_queue(beta, "Print it twice.", steer=True) is True
    assert handle.sub_run_queue(by_agent["Gamma"], "Then say bye.", steer=False) is True
    # not one of this run's (the service then looks further)
    assert handle.sub_run_queue("run-unknown", "x", steer=True) is False
    assert svc.runs[handle.run_id].sub_run_clear_queue("run-unknown") is False

    # the steer shows as the sub-run's own queue_update, not the parent's nor a sibling's
    def queued() -> set[str]:
        return {rid for rid, events in port.events.items() for _, e in events if isinstance(e, QueueUpdate)}

    await port.until(lambda: len(queued()) == 2)
    assert queued() == {beta, by_agent["Gamma"]}
    for rid in list(port.asked):
        port.answer_now(rid, Decision("allow_once"))
    # a steered or followed-up sub-agent goes on with the message (its script restarts: it asks again)
    await port.until(lambda: len(port.asked) == 2)
    assert {a.ref.run_id for a in port.asked.values()} == {beta, by_agent["Gamma"]}
    for rid in list(port.asked):
        port.answer_now(rid, Decision("allow_once"))
    await port.until(lambda: port.ended(handle.run_id))
    delivered = {
        rid: [(e.source, e.text) for _, e in events if isinstance(e, UserInput) and e.source != "prompt"]
        for rid, events in port.events.items()
    }
    assert delivered[beta] == [("steer", "Print it twice.")]
    assert delivered[by_agent["Gamma"]] == [("follow_up", "Then say bye.")]
    assert delivered[by_agent["Alpha"]] == [] and delivered[handle.run_id] == []
    provider = svc.providers.get(svc.provider_config(None, model))
    assert isinstance(provider, ScriptedProvider)
    steered = [r for r in provider.requests if UserMessage(text="Print it twice.") in r.messages]
    assert steered and all(r.messages[0] == UserMessage(text="job Beta") for r in steered)
    # once it has ended, a sub-run cannot be steered (while its parent is live: run_not_live)
    with pytest.raises(RunStateError) as ended:
        handle.sub_run_queue(beta, "too late", steer=True)
    assert ended.value.code == "run_not_live"
    await svc.close()


async def test_cancelling_the_parent_withdraws_every_prompt_and_ends_every_sub_run_first(
    workspace: Path, tmp_path: Path
) -> None:
    port = MemoryPort()
    svc = Service({"KGENT_PROVIDER": "scripted"}, Settings(), port)
    handle = await start(svc, workspace, script(tmp_path))
    await port.until(lambda: len(port.asked) == 3)
    open_prompts = set(port.asked)
    subs = sub_runs(port, handle.run_id)
    assert svc.cancel(handle.run_id) is True
    await port.until(lambda: port.ended(handle.run_id))
    assert set(port.withdrawn) == open_prompts and not port.asked
    parent_end = port.order.index((handle.run_id, "event:run_end"))
    for rid in subs:
        end: Any = port.events[rid][-1][1]
        assert isinstance(end, RunEnd) and end.result.status == "cancelled"
        assert port.order.index((rid, "event:run_end")) < parent_end
        # its prompt was withdrawn before its run_end
        [rq] = [e for _, e in port.events[rid] if isinstance(e, PermissionRequest)]
        sub_end = port.order.index((rid, "event:run_end"))
        assert port.order.index((rid, f"withdrawn:{rq.request_id}")) < sub_end
    assert port.events[handle.run_id][-1][1].result.status == "cancelled"  # type: ignore[union-attr]
    assert handle.cancel_sub(next(iter(subs))) is False  # an ended sub-run: nothing to cancel
    await svc.close()
