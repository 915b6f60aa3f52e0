"""A scriptable editor host for the daemon's e2e tests: a pygls JsonRPCClient that knows only protocol.md.

It records every `agent/event` per run, every `agent/permission` request and every `$/cancelRequest` the daemon
sends, keeps the order in which messages arrived (`wire`), and answers approvals with `policy` (a function of the
request params, sync or async, returning the result object). Every result, event and permission request it gets is
checked against the wire models (protocol.schema.json's source).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from lsprotocol.types import CancelParams
from pygls.client import JsonRPCClient
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)

from helpers import conforms
from kgent.service.wire.events import AgentEventParams, PermissionParams
from kgent.service.wire.schema import METHODS

# The e2e runs' shared state dir (removed at session end by conftest.py).
STATE_DIR = tempfile.mkdtemp(prefix="kgent-e2e-state-")
DAEMON = [sys.executable, "-m", "kgent.daemon", "--stdio"]
# How long the host waits for what should come at once (a reply, an event, an exit). Generous: a loaded machine can
# stall either process for seconds, and a passing test never waits this long.
PATIENCE = 30.0
OPTION_OF = {"allow_once": "allow_once", "allow_always": "allow_always", "reject": "reject_once"}
RESULTS = {m.name: m.result for m in METHODS if m.kind == "request" and m.direction == "client → daemon"}


def dict_converter() -> Any:
    """pygls' converter, keeping params and results as plain dicts and tolerating omitted params/result."""
    converter = default_converter()

    def message(obj: dict[str, Any], cls: type) -> Any:
        obj.setdefault("params", None)
        if obj.get("method") == "$/cancelRequest" and isinstance(obj["params"], dict):
            obj["params"] = CancelParams(id=obj["params"]["id"])
        return cls(**obj)

    def response(obj: dict[str, Any], cls: type) -> Any:
        obj.setdefault("result", None)
        return cls(**obj)

    converter.register_structure_hook(JsonRPCRequestMessage, message)
    converter.register_structure_hook(JsonRPCNotification, message)
    converter.register_structure_hook(JsonRPCResponseMessage, response)
    return converter


class HostProtocol(JsonRPCProtocol):
    def handle_message(self, message: Any) -> None:
        host: KgentHost = self._server  # type: ignore[assignment]
        method = getattr(message, "method", None)
        if method == "agent/event":
            host.wire.append(("event", message.params["runId"], message.params["seq"]))
        elif method == "$/cancelRequest":
            host.withdrawn.append(message.params.id)
            host.wire.append(("withdraw", message.params.id))
        elif method is not None:
            host.wire.append(("request", method, getattr(message, "id", None)))
        else:
            host.wire.append(("response", message.id))
        super().handle_message(message)


Policy = Callable[[dict[str, Any]], Any]


def allow_once(params: dict[str, Any]) -> dict[str, Any]:
    return {"outcome": "selected", "optionId": "allow_once"}


def not_open(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A host with no file open."""
    return {"agent/readTextFile": {"content": None}, "agent/writeTextFile": {"applied": False}}.get(
        method, {"saved": []}
    )


def select(option_id: str) -> Policy:
    return lambda params: {"outcome": "selected", "optionId": option_id}


class KgentHost(JsonRPCClient):
    def __init__(self) -> None:
        super().__init__(protocol_cls=HostProtocol, converter_factory=dict_converter)
        self.events: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.permission_requests: list[dict[str, Any]] = []
        self.withdrawn: list[Any] = []
        self.wire: list[tuple[Any, ...]] = []
        self.policy: Policy = allow_once
        self.stderr = bytearray()
        self._ended: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._drain: asyncio.Task[None] | None = None
        # Host-owned files: what each agent/readTextFile, agent/writeTextFile, agent/saveFiles request asked (in
        # order, as (method, params)), answered by `files` (method, params → result; sync or async).
        self.file_requests: list[tuple[str, dict[str, Any]]] = []
        self.files: Callable[[str, dict[str, Any]], Any] = not_open

        def serve_files(method: str) -> None:
            @self.feature(method)
            async def on_file_request(params: dict[str, Any]) -> Any:
                self.file_requests.append((method, params))
                answer = self.files(method, params)
                if asyncio.iscoroutine(answer):
                    answer = await answer
                return answer

        for method in ("agent/readTextFile", "agent/writeTextFile", "agent/saveFiles", "agent/diagnostics"):
            serve_files(method)

        @self.feature("agent/event")
        def on_event(params: dict[str, Any]) -> None:
            self.events[params["runId"]].append(params)
            if params["event"]["type"] == "run_end":
                self._end_future(params["runId"]).set_result(params["event"])

        @self.feature("agent/permission")
        async def on_permission(params: dict[str, Any]) -> Any:
            self.permission_requests.append(params)
            answer = self.policy(params)
            if asyncio.iscoroutine(answer):
                answer = await answer
            return answer

    # -- process ----------------------------------------------------------------------------------------------------
    async def launch(self, env: dict[str, str], command: list[str] | None = None) -> None:
        await self.start_io(*(command or DAEMON), env=env)
        self.start_drain()

    def start_drain(self) -> None:
        """Read the daemon's stderr (pygls never does: a full pipe would block the daemon)."""

        async def drain() -> None:
            assert self._server is not None and self._server.stderr is not None
            while data := await self._server.stderr.read(65536):
                self.stderr += data

        if self._drain is None:
            self._drain = asyncio.get_running_loop().create_task(drain())

    @property
    def pid(self) -> int:
        assert self._server is not None
        return self._server.pid

    async def wait_exit(self, within: float = PATIENCE) -> int:
        assert self._server is not None
        code = await asyncio.wait_for(self._server.wait(), within)
        if self._drain is not None:
            await asyncio.wait_for(self._drain, within)
        return code

    async def exit(self, within: float = PATIENCE) -> int:
        if self._server is not None and self._server.returncode is None:
            self.protocol.notify("exit")
        return await self.wait_exit(within)

    # -- requests ---------------------------------------------------------------------------------------------------
    async def call(
        self, method: str, params: Any = None, within: float = PATIENCE, msg_id: Any = None
    ) -> Any:
        result = await asyncio.wait_for(
            self.protocol.send_request_async(method, params, msg_id=msg_id), within
        )
        if method in RESULTS:
            conforms(RESULTS[method], result)
        return result

    async def initialize(self, capabilities: dict[str, Any] | None = None, **settings: Any) -> dict[str, Any]:
        params: dict[str, Any] = {
            "protocolVersion": 1,
            "clientInfo": {"name": "kgent-e2e"},
            "capabilities": capabilities or {},
        }
        if settings:
            params["settings"] = settings
        return await self.call("initialize", params)

    async def start_run(self, **params: Any) -> tuple[str, str]:
        result = await self.call("agent/run", params)
        return result["runId"], result["sessionId"]

    def _end_future(self, run_id: str) -> asyncio.Future[dict[str, Any]]:
        future = self._ended.get(run_id)
        if future is None:
            future = self._ended[run_id] = asyncio.get_running_loop().create_future()
        return future

    async def wait_end(self, run_id: str, within: float = 2 * PATIENCE) -> dict[str, Any]:
        return await asyncio.wait_for(asyncio.shield(self._end_future(run_id)), within)

    async def run_to_end(
        self, within: float = 2 * PATIENCE, **params: Any
    ) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
        """Start a run and wait for its run_end: (runId, run_end event, all its events)."""
        run_id, _ = await self.start_run(**params)
        end = await self.wait_end(run_id, within)
        check_stream(self, run_id)
        return run_id, end, self.of(run_id)

    def of(self, run_id: str, type: str | None = None) -> list[dict[str, Any]]:
        """The events of one run (optionally of one type), in arrival order."""
        return [p["event"] for p in self.events[run_id] if type is None or p["event"]["type"] == type]

    async def wait_for(
        self, predicate: Callable[[], Any], within: float = PATIENCE, what: str = "condition"
    ) -> Any:
        deadline = asyncio.get_running_loop().time() + within
        while True:
            value = predicate()
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"timed out waiting for {what}")
            await asyncio.sleep(0.01)


def check_stream(host: KgentHost, run_id: str, *, ended: bool = True) -> None:
    """protocol.md's per-run guarantees: seq 0, 1, 2, … without gaps; one run_end, and it is last; the
    agent/run reply arrived before the run's first event. Every event and permission request fits its wire model."""
    for params in host.events[run_id]:
        conforms(AgentEventParams, params)
    for params in host.permission_requests:
        if params["runId"] == run_id:
            conforms(PermissionParams, params)
    seqs = [p["seq"] for p in host.events[run_id]]
    assert seqs == list(range(len(seqs))), f"seq of {run_id} not gap-free: {seqs}"
    types = [p["event"]["type"] for p in host.events[run_id]]
    assert all(p["runId"] == run_id and isinstance(p["sessionId"], str) for p in host.events[run_id])
    if ended:
        assert types and types[-1] == "run_end", f"{run_id} does not end with run_end: {types[-3:]}"
    assert types.count("run_end") <= 1 and ("run_end" not in types or types[-1] == "run_end")


def reply_before_events(host: KgentHost, request_id: Any, run_id: str) -> bool:
    """True if the response `request_id` arrived before the first event of `run_id`."""
    first_event = next((i for i, w in enumerate(host.wire) if w[:2] == ("event", run_id)), None)
    reply = next(i for i, w in enumerate(host.wire) if w == ("response", request_id))
    return first_event is None or reply < first_event


def daemon_env(state_dir: str, **extra: str) -> dict[str, str]:
    """The daemon's environment: this one without keys or proxies, scripted provider, sessions in `state_dir`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY")
        and k.upper() not in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
        and not k.startswith("KGENT_")
    }
    env.update(KGENT_STATE_DIR=state_dir, KGENT_PROVIDER="scripted", KGENT_MODEL="hello")
    env.update(
        KGENT_CONFIG_DIR=os.path.join(state_dir, "config")
    )  # no user config (extensions) of the machine's
    env.update(extra)
    return env
