"""The private members of pygls that kgent relies on, checked by name, shape and behaviour (docs/pygls.md).

pyproject.toml pins pygls to the range these tests passed on. When one fails after an upgrade, the message names
the member and what kgent does with it: adapt that use (or move it to pygls' public API), re-run, widen the pin.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import inspect
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from lsprotocol.types import CancelParams, ResponseError, ResponseErrorMessage
from packaging.requirements import Requirement
from pygls.client import JsonRPCClient
from pygls.exceptions import JsonRpcException
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)
from pygls.server import JsonRPCServer

from kgent.daemon.port import DaemonPort
from kgent.daemon.server import KgentProtocol

PYGLS = importlib.metadata.version("pygls")
ROOT = Path(__file__).resolve().parents[2]


def broken(member: str, relied_on: str, where: str) -> str:
    return (
        f"pygls {PYGLS} changed the private {member}, which kgent relies on: {relied_on} ({where}). Adapt that use "
        "(or move it to pygls' public API), re-run tests/daemon/test_pygls_contract.py, then widen the pygls pin in "
        "pyproject.toml and update docs/pygls.md."
    )


class Frames:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def send_body(self, body: bytes) -> None:
        self.bodies.append(body)


@pytest.fixture
def proto() -> Any:
    server = JsonRPCServer(KgentProtocol, default_converter)
    proto: Any = server.protocol
    proto.frames = Frames()
    proto.set_writer(proto.frames)
    gate = asyncio.Event()
    proto.gate = gate

    @server.feature("test/wait")
    async def wait(params: Any) -> dict[str, Any]:
        await gate.wait()
        return {"echo": params}

    return proto


def sent(proto: Any) -> list[str]:
    return [b.decode() for b in proto.frames.bodies]


def request(proto: Any, msg_id: Any) -> None:
    proto.handle_message(JsonRPCRequestMessage(id=msg_id, method="test/wait", jsonrpc="2.0", params={"n": 1}))


def test_the_installed_pygls_is_the_pinned_one() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    [pin] = [Requirement(d) for d in deps if Requirement(d).name == "pygls"]
    assert pin.specifier.contains(PYGLS), (
        f"pygls {PYGLS} is installed but pyproject.toml pins {pin.specifier}: this is the range the contract below "
        "was checked on. Run tests/daemon/test_pygls_contract.py against the new version before widening the pin."
    )


@pytest.mark.parametrize(
    ("member", "params", "where"),
    [
        (
            "_send_data",
            ["self", "data"],
            "KgentProtocol overrides it to write compact frames through FrameWriter",
        ),
        (
            "_send_response",
            ["self", "msg_id", "result", "error"],
            "KgentProtocol overrides it to start a run's events once the agent/run reply is written",
        ),
        ("_serialize_message", ["self", "data"], "KgentProtocol._send_data passes it as json.dumps' default"),
    ],
)
def test_overridden_and_called_methods_keep_their_signature(
    member: str, params: list[str], where: str
) -> None:
    method = getattr(JsonRPCProtocol, member, None)
    assert callable(method), broken(f"JsonRPCProtocol.{member}", "it exists", where)
    assert list(inspect.signature(method).parameters) == params, broken(
        f"JsonRPCProtocol.{member}", f"its parameters are {params}", where
    )


def test_request_futures_is_a_dict(proto: Any) -> None:
    where = (
        "kgent.daemon.server.KgentProtocol.request/withdraw, kgent.daemon.inbound, kgent.daemon.server._main"
    )
    assert isinstance(getattr(proto, "_request_futures", None), dict), broken(
        "JsonRPCProtocol._request_futures", "a dict of in-flight futures keyed by message id", where
    )


async def test_an_in_flight_request_is_its_handler_task_in_request_futures(proto: Any) -> None:
    request(proto, 7)
    task = proto._request_futures.get(7)
    assert isinstance(task, asyncio.Task) and not task.done(), broken(
        "JsonRPCProtocol._request_futures",
        "an async handler's asyncio.Task sits under its request id while it runs",
        "inbound refuses a request reusing an in-flight id; server._main lets in-flight handlers finish at shutdown",
    )
    proto.gate.set()
    await asyncio.wait_for(task, 30)
    await asyncio.sleep(0)  # pygls replies from the task's done callback
    assert 7 not in proto._request_futures, broken(
        "JsonRPCProtocol._request_futures",
        "a request's entry is removed once it is answered",
        "kgent.daemon.inbound",
    )


async def test_every_reply_goes_through_send_response_and_send_data(proto: Any) -> None:
    fired: list[int] = []
    proto.after_response["r1"] = lambda: fired.append(len(proto.frames.bodies))
    request(proto, "r1")
    proto.gate.set()
    await asyncio.wait_for(proto._request_futures["r1"], 30)
    await asyncio.sleep(0)
    assert fired == [1], broken(
        "JsonRPCProtocol._send_response",
        "pygls calls it to answer each request once the handler is done",
        "KgentProtocol.after_response starts a run's events after its agent/run reply",
    )
    assert [json.loads(b) for b in sent(proto)] == [
        {"id": "r1", "jsonrpc": "2.0", "result": {"echo": {"n": 1}}}
    ], broken(
        "JsonRPCProtocol._send_data / _serialize_message",
        "every outgoing message passes through _send_data, and _serialize_message turns pygls' attrs messages "
        "into dicts",
        "KgentProtocol._send_data",
    )


async def test_a_response_resolves_the_future_in_request_futures(proto: Any) -> None:
    where = "DaemonPort.request puts its own asyncio future there for pygls to resolve"
    port = DaemonPort(proto)
    ok = asyncio.ensure_future(port.request("agent/permission", {}, "p1"))
    failed = asyncio.ensure_future(port.request("agent/permission", {}, "p2"))
    await asyncio.sleep(0)  # both requests are out: their futures are registered
    proto.handle_message(JsonRPCResponseMessage(id="p1", jsonrpc="2.0", result={"outcome": "cancelled"}))
    proto.handle_message(ResponseErrorMessage(id="p2", error=ResponseError(code=-32001, message="no")))
    await asyncio.wait([ok, failed])
    assert ok.result() == {"outcome": "cancelled"}, broken(
        "JsonRPCProtocol._request_futures", "a response's result is set on the future under its id", where
    )
    assert isinstance(failed.exception(), JsonRpcException), broken(
        "JsonRPCProtocol._request_futures",
        "an error response is set on the future as a JsonRpcException",
        where,
    )
    assert "p1" not in proto._request_futures and "p2" not in proto._request_futures


async def test_withdrawing_a_prompt_drops_its_bookkeeping(proto: Any) -> None:
    asking = asyncio.ensure_future(DaemonPort(proto).request("agent/permission", {}, "p3"))
    await asyncio.sleep(0)
    future = proto._request_futures["p3"]
    asking.cancel()  # withdrawn
    await asyncio.wait([asking])
    assert "p3" not in proto._request_futures
    assert json.loads(sent(proto)[-1]) == {
        "jsonrpc": "2.0",
        "method": "$/cancelRequest",
        "params": {"id": "p3"},
    }
    proto.handle_message(JsonRPCResponseMessage(id="p3", jsonrpc="2.0", result={}))  # a late answer: ignored
    assert future.cancelled(), broken(
        "JsonRPCProtocol._request_futures",
        "removing an id from it makes pygls ignore a late response",
        "DaemonPort.request",
    )


async def test_cancel_request_cancels_the_handler_task(proto: Any) -> None:
    request(proto, 9)
    task = proto._request_futures[9]
    await asyncio.sleep(0)
    proto.handle_message(
        JsonRPCNotification(method="$/cancelRequest", jsonrpc="2.0", params=CancelParams(id=9))
    )
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 30)
    await asyncio.sleep(0)
    assert '"code":-32800' in sent(proto)[-1]


def test_the_e2e_host_reaches_the_daemon_process_and_its_owner() -> None:
    """Test-only: tests/e2e/kgent_host.py reads the subprocess from `JsonRPCClient._server` (pid, stderr, wait) and
    the owning client from `JsonRPCProtocol._server`; test_daemon_server.py sets `_ctx_msg_id`."""
    client = JsonRPCClient(protocol_cls=JsonRPCProtocol, converter_factory=default_converter)
    assert hasattr(client, "_server") and client._server is None, broken(
        "JsonRPCClient._server", "the daemon subprocess, None before start_io", "tests/e2e/kgent_host.py"
    )
    assert client.protocol._server is client, broken(
        "JsonRPCProtocol._server", "the client or server owning the protocol", "tests/e2e/kgent_host.py"
    )
    assert hasattr(client.protocol._ctx_msg_id, "set"), broken(
        "JsonRPCProtocol._ctx_msg_id",
        "a ContextVar holding the current request id",
        "tests/daemon/test_daemon_server.py",
    )
