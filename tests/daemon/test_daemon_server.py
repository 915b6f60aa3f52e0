"""The server's wiring: a run's events start only once its `agent/run` reply is written; the handler table is what
protocol.md lists; every error leaves through the one mapper."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kgent.daemon.server import REQUESTS, _run, build_server
from kgent.service.handshake import Settings


class Frames:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def send_body(self, body: bytes) -> None:
        self.bodies.append(body)


def test_the_hook_fires_once_the_reply_is_written() -> None:
    server, _ = build_server({}, Settings(), lambda: None)
    proto = server.protocol
    proto.frames = Frames()  # type: ignore[attr-defined]
    seen: list[int] = []
    proto.after_response["r1"] = lambda: seen.append(len(proto.frames.bodies))  # type: ignore[attr-defined]
    proto.after_response["r2"] = lambda: seen.append(-1)  # type: ignore[attr-defined]
    proto._send_response("r1", {"runId": "x"})
    from lsprotocol.types import ResponseError

    proto._send_response("r2", None, ResponseError(code=-32001, message="no"))
    assert seen == [1]  # after the first frame; never for an error reply
    assert b'"id":"r1"' in proto.frames.bodies[0]  # type: ignore[attr-defined]
    assert proto.after_response == {}  # type: ignore[attr-defined]


async def test_agent_run_defers_its_events_to_the_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGENT_STATE_DIR", str(tmp_path / "state"))
    server, svc = build_server({"KGENT_PROVIDER": "scripted"}, Settings(), lambda: None)
    proto: Any = server.protocol
    proto.frames = Frames()
    proto._ctx_msg_id.set("run-request-1")
    result = await _run(svc, {"prompt": "hi", "workspace": str(tmp_path)})
    handle = svc.runs[result.run_id]
    await asyncio.wait_for(handle.run.result(), 30)  # the run goes on to its end meanwhile...
    assert handle.task is None and proto.frames.bodies == []  # ...but nothing of it is sent before the reply
    proto._send_response("run-request-1", result)
    assert handle.task is not None
    await asyncio.wait_for(handle.task, 30)
    assert b'"id":"run-request-1"' in proto.frames.bodies[0] and b'"seq":0,' in proto.frames.bodies[1]
    await svc.close()


def test_every_request_goes_through_the_error_mapper() -> None:
    server, _ = build_server({}, Settings(), lambda: None)
    features = server.protocol.fm.features
    assert set(features) == set(REQUESTS) | {"exit"}
    assert all(features[m].__name__.startswith("handle_") for m in REQUESTS)
