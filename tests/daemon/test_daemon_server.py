"""The server's wiring: a run's events start only once its `agent/run` reply is written; the handler table is what
protocol.md lists; every error leaves through the one mapper."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kgent.daemon.server import REQUESTS, build_server
from kgent.service.handshake import Settings


class Frames:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def send_body(self, body: bytes) -> None:
        self.bodies.append(body)


async def test_agent_run_defers_its_events_to_the_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGENT_STATE_DIR", str(tmp_path / "state"))
    conn, svc = build_server({"KGENT_PROVIDER": "scripted"}, Settings(), lambda: None)
    frames = conn.frames = Frames()
    started, gate = asyncio.Event(), asyncio.Event()
    handler = conn.handlers["agent/run"]

    async def held_reply(params: Any) -> Any:  # the reply held back until the test lets it go
        result = await handler(params)
        started.set()
        await gate.wait()
        return result

    conn.handlers["agent/run"] = held_reply
    conn.request("run-request-1", "agent/run", {"prompt": "hi", "workspace": str(tmp_path)})
    serving = conn.serving["run-request-1"]
    await asyncio.wait_for(started.wait(), 30)
    [handle] = svc.runs.values()
    await asyncio.wait_for(handle.run.result(), 30)  # the run goes on to its end meanwhile...
    assert handle.task is None and frames.bodies == []  # ...but nothing of it is sent before the reply
    gate.set()
    await asyncio.wait_for(serving, 30)
    await asyncio.sleep(0)  # the reply is written from the task's done callback, and the run's events start
    assert handle.task is not None
    await asyncio.wait_for(handle.task, 30)
    assert b'"id":"run-request-1"' in frames.bodies[0] and b'"seq":0,' in frames.bodies[1]
    await svc.close()


def test_every_request_goes_through_the_error_mapper() -> None:
    conn, _ = build_server({}, Settings(), lambda: None)
    assert set(conn.handlers) == set(REQUESTS)
    assert all(conn.handlers[m].__name__.startswith("handle_") for m in REQUESTS)
