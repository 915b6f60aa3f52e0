"""The daemon's JSON-RPC core (kgent.daemon.rpc): a request is a task under its id until answered, every reply is one
frame, a reply's hook fires after it, the client's answers resolve the daemon's requests, and `$/cancelRequest` works
both ways. The same behaviour end to end, through a real pygls client over pipes: tests/e2e (errors, cancel, fuzz)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from test_daemon_inbound import Frames

from kgent.daemon.errors import RpcError, to_jsonrpc
from kgent.daemon.inbound import Dispatcher
from kgent.daemon.port import DaemonPort
from kgent.daemon.rpc import Connection
from kgent.service.errors import ServiceError


class Wired:
    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.exits = 0
        self.seen_ids: list[Any] = []

        async def wait(params: Any) -> dict[str, Any]:
            self.seen_ids.append(Connection.request_id())
            await self.gate.wait()
            return {"echo": params}

        async def fail(params: Any) -> None:
            raise to_jsonrpc(ServiceError(-32002, "session nope not found", "session_not_found"))

        async def bug(params: Any) -> None:
            raise KeyError("a bug")

        def exit_() -> None:
            self.exits += 1

        self.conn = Connection({"test/wait": wait, "test/fail": fail, "test/bug": bug}, exit_)
        self.frames = Frames()
        self.conn.frames = self.frames
        self.dispatcher = Dispatcher(self.conn)

    def send(self, message: dict[str, Any]) -> None:
        self.dispatcher.feed([json.dumps(message).encode()])

    def request(self, msg_id: Any, method: str = "test/wait") -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {"n": 1}})


@pytest.fixture
def wired() -> Wired:
    return Wired()


async def settle() -> None:
    for _ in range(3):  # a task's step, then its done callback
        await asyncio.sleep(0)


async def test_a_request_is_its_task_under_its_id_until_answered(wired: Wired) -> None:
    wired.request(7)
    task = wired.conn.serving[7]
    assert isinstance(task, asyncio.Task) and not task.done() and wired.conn.in_flight(7)
    await settle()
    assert wired.seen_ids == [7]  # the handler knows which request it serves
    assert Connection.request_id() is None  # … and nothing else does
    wired.gate.set()
    await asyncio.wait_for(task, 30)
    await settle()
    assert 7 not in wired.conn.serving
    assert wired.frames.messages() == [{"jsonrpc": "2.0", "id": 7, "result": {"echo": {"n": 1}}}]


async def test_the_hook_fires_after_a_successful_reply_only(wired: Wired) -> None:
    fired: list[int] = []
    wired.conn.after_response["r1"] = lambda: fired.append(len(wired.frames.bodies))
    wired.conn.after_response["r2"] = lambda: fired.append(-1)
    wired.request("r1")
    wired.request("r2", "test/fail")
    wired.gate.set()
    await asyncio.wait_for(asyncio.gather(*wired.conn.serving.values(), return_exceptions=True), 30)
    await settle()
    ids = [m["id"] for m in wired.frames.messages()]
    assert fired == [ids.index("r1") + 1]  # right after r1's reply is written; never for an error reply
    assert wired.conn.after_response == {}


async def test_errors_are_replies_with_code_message_and_data(wired: Wired) -> None:
    wired.request(1, "test/fail")
    wired.request(2, "test/bug")
    wired.request(3, "test/none")
    await settle()
    by_id = {m["id"]: m["error"] for m in wired.frames.messages()}
    assert by_id[1] == {
        "code": -32002,
        "message": "session nope not found",
        "data": {"code": "session_not_found"},
    }
    assert by_id[2] == {"code": -32603, "message": "internal error", "data": {"code": "internal_error"}}
    assert by_id[3] == {"code": -32601, "message": "method not found: test/none"}  # protocol.md: no data
    assert wired.conn.serving == {}


async def test_cancel_request_cancels_the_handler_and_answers_32800(wired: Wired) -> None:
    wired.request(9)
    task = wired.conn.serving[9]
    await settle()
    wired.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 9}})
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 30)
    await settle()
    [reply] = wired.frames.messages()
    assert reply["id"] == 9 and reply["error"]["code"] == -32800 and 9 not in wired.conn.serving
    wired.send(
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 9}}
    )  # nothing in flight: ignored
    await settle()
    assert len(wired.frames.bodies) == 1


async def test_answers_resolve_the_daemons_requests(wired: Wired) -> None:
    port = DaemonPort(wired.conn)
    ok = asyncio.ensure_future(port.request("agent/permission", {"x": 1}, "p1"))
    failed = asyncio.ensure_future(port.request("agent/readTextFile", {}, "p2"))
    malformed = asyncio.ensure_future(port.request("agent/readTextFile", {}, "p3"))
    await settle()
    assert [m["id"] for m in wired.frames.messages()] == ["p1", "p2", "p3"]
    assert wired.frames.messages()[0] == {
        "jsonrpc": "2.0",
        "id": "p1",
        "method": "agent/permission",
        "params": {"x": 1},
    }
    wired.send({"jsonrpc": "2.0", "id": "p1", "result": {"outcome": "cancelled"}})
    wired.send(
        {"jsonrpc": "2.0", "id": "p2", "error": {"code": -32001, "message": "no", "data": {"code": "x"}}}
    )
    wired.send({"jsonrpc": "2.0", "id": "p3", "error": {"code": "?"}})
    await asyncio.wait([ok, failed, malformed], timeout=30)
    assert ok.result() == {"outcome": "cancelled"}
    error = failed.exception()
    assert isinstance(error, RpcError) and (error.code, error.message, error.data) == (
        -32001,
        "no",
        {"code": "x"},
    )
    error = malformed.exception()
    assert isinstance(error, RpcError) and error.code == -32603
    assert wired.conn.waiting == {}


async def test_a_withdrawn_request_is_cancelled_on_the_wire_and_its_late_answer_dropped(wired: Wired) -> None:
    asking = asyncio.ensure_future(DaemonPort(wired.conn).request("agent/permission", {}, "p4"))
    await settle()
    future = wired.conn.waiting["p4"]
    asking.cancel()
    await asyncio.wait([asking], timeout=30)
    assert "p4" not in wired.conn.waiting
    assert wired.frames.messages()[-1] == {
        "jsonrpc": "2.0",
        "method": "$/cancelRequest",
        "params": {"id": "p4"},
    }
    wired.send({"jsonrpc": "2.0", "id": "p4", "result": {}})  # late: dropped, and nothing is written back
    assert future.cancelled() and len(wired.frames.bodies) == 2


async def test_the_client_cancelling_one_of_our_prompts_answers_it_cancelled(wired: Wired) -> None:
    asking = asyncio.ensure_future(DaemonPort(wired.conn).request("agent/permission", {}, "p5"))
    await settle()
    wired.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "p5"}})
    assert await asyncio.wait_for(asking, 30) == {"outcome": "cancelled"}
    assert wired.conn.waiting == {}


async def test_exit_ends_the_connection_as_a_notification_or_a_request(wired: Wired) -> None:
    wired.send({"jsonrpc": "2.0", "method": "exit"})
    assert wired.exits == 1 and wired.dispatcher.stopped and wired.frames.bodies == []
    wired.dispatcher.stopped = False
    wired.send({"jsonrpc": "2.0", "id": 3, "method": "exit"})
    assert wired.exits == 2 and wired.frames.messages() == [{"jsonrpc": "2.0", "id": 3, "result": None}]


async def test_an_id_in_use_by_one_of_our_prompts_is_refused_too(wired: Wired) -> None:
    asking = asyncio.ensure_future(DaemonPort(wired.conn).request("agent/permission", {}, "p6"))
    await settle()
    wired.request("p6")
    reply = wired.frames.messages()[-1]
    assert reply["id"] == "p6" and reply["error"]["data"] == {"code": "invalid_request"}
    assert not asking.done() and wired.conn.serving == {}
    asking.cancel()


async def test_concurrent_requests_are_answered_under_their_own_ids_as_they_finish() -> None:
    gates = {i: asyncio.Event() for i in range(5)}
    seen: dict[int, Any] = {}

    async def held(params: Any) -> int:
        n = params["n"]
        await gates[n].wait()
        seen[n] = Connection.request_id()  # still this request's id after the others ran meanwhile
        return int(n * 10)

    conn = Connection({"test/held": held}, lambda: None)
    frames = conn.frames = Frames()
    for n in range(5):
        conn.request(f"q{n}", "test/held", {"n": n})
    for n in reversed(range(5)):  # the last asked finishes first
        gates[n].set()
        await settle()
    assert [(m["id"], m["result"]) for m in frames.messages()] == [
        (f"q{n}", n * 10) for n in reversed(range(5))
    ]
    assert seen == {n: f"q{n}" for n in range(5)} and conn.serving == {}


async def test_a_cancelled_request_drops_its_reply_hook(wired: Wired) -> None:
    fired: list[str] = []
    wired.conn.after_response["c1"] = lambda: fired.append("c1")
    wired.request("c1")
    await settle()
    wired.conn.cancel("c1")
    await settle()
    [reply] = wired.frames.messages()
    assert reply["error"]["code"] == -32800 and fired == [] and wired.conn.after_response == {}
    wired.request("c1")  # the id is free again, and its new reply has no hook left over
    wired.gate.set()
    await settle()
    assert wired.frames.messages()[-1] == {"jsonrpc": "2.0", "id": "c1", "result": {"echo": {"n": 1}}}
    assert fired == []
