"""The inbound checks: a request method sent as a notification is never run, and a request that
reuses the id of one still in flight is refused instead of displacing it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from kgent.daemon.inbound import Dispatcher
from kgent.daemon.server import build_server
from kgent.service.handshake import Settings


class Frames:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def send_body(self, body: bytes) -> None:
        self.bodies.append(body)

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(b) for b in self.bodies]


@pytest.fixture
def wired(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, Dispatcher]:
    monkeypatch.setenv("KGENT_STATE_DIR", str(tmp_path / "state"))
    conn, svc = build_server({"KGENT_PROVIDER": "scripted"}, Settings(), lambda: None)
    conn.frames = Frames()
    return conn, svc, Dispatcher(conn)


def body(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


async def test_a_request_method_sent_as_a_notification_is_ignored(wired, tmp_path: Path) -> None:
    """Frames are dispatched in order: a run requested after the notifications, seen to its end, would follow any run
    they had started, so what is stored then is all there is."""
    proto, svc, dispatcher = wired
    (tmp_path / "sample.py").write_text("value = 1\n")
    dispatcher.feed(
        [
            body(
                {
                    "jsonrpc": "2.0",
                    "method": "agent/run",
                    "params": {"prompt": "Set value to 2", "workspace": str(tmp_path), "model": "tool-loop"},
                }
            ),
            body({"jsonrpc": "2.0", "method": "shutdown"}),
        ]
    )
    assert proto.frames.bodies == []  # notifications are never answered
    assert svc.runs == {} and not svc.shut_down  # no invisible run (it would wait on an approval nobody sees)
    dispatcher.feed(
        [
            body(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "agent/run",
                    "params": {"prompt": "Hi", "workspace": str(tmp_path), "model": "hello"},
                }
            )
        ]
    )
    started = await asyncio.wait_for(proto.serving[1], 30)
    run_id, session_id = started["runId"], started["sessionId"]
    handle = svc.runs.get(run_id)
    if handle is not None:
        await asyncio.wait_for(handle.ended.wait(), 30)
    assert list(svc.ended) == [run_id] and svc.runs == {} and not svc.shut_down
    assert [s.id for s in await svc.store.list(str(tmp_path))] == [session_id]
    assert (tmp_path / "sample.py").read_text() == "value = 1\n"
    await svc.close()


async def test_a_request_reusing_an_in_flight_id_is_refused(wired) -> None:
    proto, svc, dispatcher = wired
    in_flight: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    proto.serving[7] = in_flight
    dispatcher.feed(
        [body({"jsonrpc": "2.0", "id": 7, "method": "agent/sessions", "params": {"workspace": "/"}})]
    )
    [reply] = proto.frames.messages()
    assert reply["id"] == 7 and reply["error"]["code"] == -32600
    assert reply["error"]["data"] == {"code": "invalid_request"} and "in flight" in reply["error"]["message"]
    assert proto.serving[7] is in_flight  # the first request is untouched
    del proto.serving[7]
    dispatcher.feed(
        [body({"jsonrpc": "2.0", "id": 7, "method": "agent/sessions", "params": {"workspace": "/"}})]
    )
    await asyncio.wait_for(proto.serving[7], 30)  # served (not refused): its handler task is in flight
    await asyncio.sleep(0)  # the reply is written from the task's done callback
    assert "result" in proto.frames.messages()[-1]  # once answered, an id may be used again
    await svc.close()
