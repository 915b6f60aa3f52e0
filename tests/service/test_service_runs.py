"""The run port below every front: typed events reach the sink numbered without gaps, prompts go through the
permission port under one answer policy, moot prompts are withdrawn before the next event, and a front whose sink
breaks still sees a run_end built from a RunResult."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgent.core.events import PermissionRequest, RunEnd, ToolCallEvent
from kgent.service import wire as W
from kgent.service.handshake import Settings
from kgent.service.runs import Decision
from kgent.service.service import Service
from kgent.testing.ports import MemoryPort


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KGENT_STATE_DIR", str(tmp_path / "state"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def service(port: MemoryPort) -> Service:
    return Service({"KGENT_PROVIDER": "scripted"}, Settings(), port)


async def run(svc: Service, workspace: Path, script: str, mode: str = "ask") -> str:
    params = {"prompt": "go", "workspace": str(workspace), "model": script, "mode": mode}
    handle = await svc.start_run(W.RunParams.parse(params))
    handle.start()
    return handle.run_id


async def test_typed_events_reach_the_sink_in_order_and_an_unoffered_option_rejects(state: Path) -> None:
    port = MemoryPort(answer=lambda request: Decision("allow_forever"))  # not one of the offered options
    svc = service(port)
    run_id = await run(svc, state, "two-writes")
    await port.until(lambda: port.ended(run_id))
    events = port.events[run_id]
    assert [seq for seq, _ in events] == list(range(len(events)))
    assert any(isinstance(e, ToolCallEvent) for _, e in events)
    end = events[-1][1]
    assert isinstance(end, RunEnd) and end.result.status == "settled"
    resolved = [e for _, e in events if e.type == "permission_resolved"]
    assert resolved and all(not e.approved and e.decision == "reject_once" for e in resolved)  # type: ignore[union-attr]
    assert not (state / "notes.txt").exists()
    await svc.close()


async def test_an_offered_option_approves(state: Path) -> None:
    port = MemoryPort(answer=lambda request: Decision("allow_once"))
    svc = service(port)
    run_id = await run(svc, state, "two-writes")
    await port.until(lambda: port.ended(run_id))
    assert (state / "notes.txt").read_text() == "second\n"
    await svc.close()


async def test_a_cancelled_run_withdraws_its_prompt_before_its_run_end(state: Path) -> None:
    port = MemoryPort()  # prompts stay open
    svc = service(port)
    run_id = await run(svc, state, "two-writes")
    await port.until(lambda: bool(port.asked))
    (rid,) = port.asked
    assert isinstance(port.asked[rid].request, PermissionRequest)
    assert svc.cancel(run_id) is True
    await port.until(lambda: port.ended(run_id))
    assert port.withdrawn == [rid]
    order = [what for r, what in port.order if r == run_id]
    assert order.index(f"withdrawn:{rid}") < order.index("event:run_end")
    await svc.close()


async def test_a_decision_to_cancel_cancels_the_run(state: Path) -> None:
    port = MemoryPort(answer=lambda request: Decision("reject_once", cancel=True))
    svc = service(port)
    run_id = await run(svc, state, "two-writes")
    await port.until(lambda: port.ended(run_id))
    end = port.events[run_id][-1][1]
    assert isinstance(end, RunEnd) and end.result.status == "cancelled"
    await svc.close()


async def test_a_broken_sink_still_gets_a_failed_run_end(state: Path) -> None:
    class Breaks(MemoryPort):
        def send(self, ref, seq, event):  # type: ignore[no-untyped-def]
            if isinstance(event, ToolCallEvent):
                raise RuntimeError("a front bug")
            super().send(ref, seq, event)

    port = Breaks(answer=lambda request: Decision("allow_once"))
    svc = service(port)
    run_id = await run(svc, state, "two-writes")
    await port.until(lambda: port.ended(run_id))
    end = port.events[run_id][-1][1]
    assert isinstance(end, RunEnd)
    assert end.result.status == "failed" and end.result.error == {
        "code": "internal_error",
        "message": "the server failed to forward this run",
    }
    assert end.result.usage["inputTokens"] == 0
    seqs = [seq for seq, _ in port.events[run_id]]
    assert seqs == sorted(seqs) and seqs[-1] == len(seqs)  # the broken event's seq was used, not reused
    await svc.close()


async def test_a_broken_sink_ends_the_run_itself_before_its_run_end(state: Path) -> None:
    """The failed run_end comes once the cancelled run is over (its tools stopped, its session written): no front is
    left with a run still going that it cannot see or close (`kgent run | head` hung on one at exit)."""
    import asyncio

    class Breaks(MemoryPort):
        def send(self, ref, seq, event):  # type: ignore[no-untyped-def]
            if event.type == "run_start":
                raise BrokenPipeError("the reader has gone")
            super().send(ref, seq, event)

    port = Breaks(answer=lambda request: Decision("allow_once"))
    svc = service(port)
    params = {"prompt": "go", "workspace": str(state), "model": "two-writes", "mode": "ask"}
    handle = await svc.start_run(W.RunParams.parse(params))
    handle.start()
    await port.until(lambda: port.ended(handle.run_id))
    assert handle.run.done and handle.status == "failed"
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("kgent-run-") and not t.done()]
    await svc.close()
