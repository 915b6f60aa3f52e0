"""The Hub below the routes: readers follow a run from any seq, ended runs leave memory for the archive and still
replay, and an approval takes exactly one answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kgent.http import hub as H


def params(run_id: str, seq: int) -> str:
    return json.dumps({"runId": run_id, "sessionId": "s1", "seq": seq, "event": {"type": "usage"}})


async def test_a_reader_follows_from_any_seq_until_the_end() -> None:
    hub = H.Hub()
    log = hub.open("run-aaaaaa", "s1")
    for seq in range(3):
        hub.send_event("run-aaaaaa", seq, params("run-aaaaaa", seq))

    async def read(start: int) -> list[int]:
        got = []
        async for first, events in log.follow(start):
            got += range(first, first + len(events))
        return got

    reader = asyncio.create_task(read(1))
    await asyncio.sleep(0)
    for seq in range(3, 6):
        hub.send_event("run-aaaaaa", seq, params("run-aaaaaa", seq))
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
            hub.send_event(run_id, seq, params(run_id, seq))
        hub.closed_run(run_id)
    await hub.flush()
    assert sorted(hub.logs) == ids[2:]
    assert hub.session_runs["s1"] == ids  # session streams still find every run
    archived = await hub.find(ids[0])
    assert archived is not None and archived.ended and archived.session_id == "s1"
    assert archived.events == [params(ids[0], seq) for seq in range(3)]
    assert await hub.find("run-ffffff") is None
    assert await hub.find("../../etc/passwd") is None


async def test_an_approval_takes_one_answer() -> None:
    hub = H.Hub()
    future = hub.request("agent/permission", {"runId": "run-1", "requestId": "p1"}, "p1")
    assert hub.answer("p1", {"outcome": "selected", "optionId": "allow_once"}) is True
    assert hub.answer("p1", {"outcome": "cancelled"}) is False
    assert await future == {"outcome": "selected", "optionId": "allow_once"}
    assert hub.closed["p1"] == "answered" and hub.pending == {}
    hub.request("agent/permission", {"runId": "run-1", "requestId": "p2"}, "p2")
    hub.withdraw("p2")
    assert hub.answer("p2", {"outcome": "cancelled"}) is False and hub.closed["p2"] == "withdrawn"
