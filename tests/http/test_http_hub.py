"""The Hub below the routes: readers follow a run from any seq, ended runs leave memory for the archive and still
replay, and an approval takes exactly one answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kgent.core.events import PermissionRequest, UsageEvent
from kgent.http import hub as H
from kgent.service.runs import Decision, RunRef

USAGE = UsageEvent(turn={}, total={})


def send(hub: H.Hub, run_id: str, seq: int) -> None:
    hub.send(RunRef(run_id, "s1"), seq, USAGE)


def params(run_id: str, seq: int) -> str:
    return json.dumps(
        {"runId": run_id, "sessionId": "s1", "seq": seq, "event": {"type": "usage", "turn": {}, "total": {}}},
        separators=(",", ":"),
    )


async def test_a_reader_follows_from_any_seq_until_the_end() -> None:
    hub = H.Hub()
    log = hub.open("run-aaaaaa", "s1")
    for seq in range(3):
        send(hub, "run-aaaaaa", seq)

    async def read(start: int) -> list[int]:
        got = []
        async for first, events in log.follow(start):
            got += range(first, first + len(events))
        return got

    reader = asyncio.create_task(read(1))
    await asyncio.sleep(0)
    for seq in range(3, 6):
        send(hub, "run-aaaaaa", seq)
        await asyncio.sleep(0)
    hub.closed_run("run-aaaaaa")
    assert await asyncio.wait_for(reader, 10) == [1, 2, 3, 4, 5]
    assert await read(9) == []


async def test_ended_runs_leave_memory_for_the_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(H, "KEEP_ENDED", 2)
    hub = H.Hub(archive=tmp_path / "runs")
    ids = [f"run-{i:06x}" for i in range(4)]
    for run_id in ids:
        hub.open(run_id, "s1")
        for seq in range(3):
            send(hub, run_id, seq)
        hub.closed_run(run_id)
    await hub.flush()
    assert sorted(hub.logs) == ids[2:]
    assert hub.session_runs["s1"] == ids  # session streams still find every run
    archived = await hub.find(ids[0])
    assert archived is not None and archived.ended and archived.session_id == "s1"
    assert archived.events == [params(ids[0], seq) for seq in range(3)]
    assert await hub.find("run-ffffff") is None
    assert await hub.find("../../etc/passwd") is None


def prompt(rid: str) -> PermissionRequest:
    return PermissionRequest(
        request_id=rid,
        tool_call={"toolCallId": "t1"},
        risk="low",
        reason="",
        operation="write",
        scope="workspace",
    )


async def test_an_approval_takes_one_answer() -> None:
    hub = H.Hub()
    ref = RunRef("run-1", "s1")
    asking = asyncio.create_task(hub.ask(ref, prompt("p1")))
    await asyncio.sleep(0)  # the ask registers on its first step
    assert hub.pending["p1"].params["runId"] == "run-1" and hub.pending["p1"].params["requestId"] == "p1"
    assert hub.answer("p1", {"outcome": "selected", "optionId": "allow_once"}) is True
    assert hub.answer("p1", {"outcome": "cancelled"}) is False
    assert await asking == Decision("allow_once")
    assert hub.closed["p1"] == "answered" and hub.pending == {}
    withdrawn = asyncio.create_task(hub.ask(ref, prompt("p2")))
    await asyncio.sleep(0)
    assert "p2" in hub.pending
    withdrawn.cancel()
    await asyncio.wait([withdrawn])
    assert hub.answer("p2", {"outcome": "cancelled"}) is False and hub.closed["p2"] == "withdrawn"


async def test_a_sub_runs_stream_exists_once_its_task_call_names_it() -> None:
    """The parent's task call names its sub-run before the sub-run's first event: a page that follows it at once
    finds its stream (waiting for events) instead of no such run; its events then land there."""
    from kgent.core.events import ToolUpdate

    hub = H.Hub()
    hub.open("run-parent", "s1")
    named = ToolUpdate(
        tool_call_id="call_1", status="in_progress", details={"runId": "run-sub", "agent": "A"}
    )
    assert hub.logs.get("run-sub") is None
    hub.send(RunRef("run-parent", "s1"), 0, named)
    log = hub.logs["run-sub"]
    assert log.session_id == "s1" and log.events == []
    hub.send(RunRef("run-sub", "s1", "run-parent"), 0, USAGE)
    assert hub.logs["run-sub"] is log and len(log.events) == 1
