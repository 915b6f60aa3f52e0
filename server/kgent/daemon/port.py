"""DaemonPort: the run port (kgent.service.runs) as JSON-RPC over the daemon's one frame writer — a run's typed
events become `agent/event` notifications, its prompts `agent/permission` requests (withdrawn with
`$/cancelRequest`), and host-file requests `agent/readTextFile` / `agent/writeTextFile` / `agent/saveFiles`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kgent.core.events import Event, MessageDelta, PermissionRequest, RunEnd, event_to_dict
from kgent.daemon.errors import INVALID_PARAMS, RpcError
from kgent.daemon.textfiles import DaemonTextFiles
from kgent.service.runs import Decision, FileScope, RunRef, new_text_problem
from kgent.service.wire import chosen_answer

if TYPE_CHECKING:
    from kgent.daemon.rpc import Connection

_encode = json.JSONEncoder(separators=(",", ":"), default=str).encode


class DaemonPort:
    """Implements kgent.service.runs.RunPort (and host files) for the stdio daemon."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        # run id → the start of its `agent/event` frames, up to the seq (built once per run: the hot path)
        self._prefixes: dict[str, str] = {}
        self._out: Callable[[bytes], None] | None = None

    def _prefix(self, ref: RunRef) -> str:
        parent = f',"parentRunId":{_encode(ref.parent_run_id)}' if ref.parent_run_id is not None else ""
        prefix = self._prefixes[ref.run_id] = (
            f'{{"jsonrpc":"2.0","method":"agent/event","params":{{"runId":{_encode(ref.run_id)},'
            f'"sessionId":{_encode(ref.session_id)}{parent},"seq":'
        )
        return prefix

    def send(self, ref: RunRef, seq: int, event: Event) -> None:
        out = self._out
        if out is None:  # the frame writer exists once the connection is up (before any run)
            frames = self.conn.frames
            assert frames is not None
            out = self._out = frames.send_body
        prefix = self._prefixes.get(ref.run_id) or self._prefix(ref)
        if type(event) is MessageDelta:  # one per streamed token: the same bytes as event_to_dict's, cheaper
            out(
                f'{prefix}{seq},"event":{{"type":"message_delta","kind":"{event.kind}",'
                f'"delta":{_encode(event.delta)}}}}}}}'.encode()
            )
            return
        out(f'{prefix}{seq},"event":{_encode(event_to_dict(event))}}}}}'.encode())
        if type(event) is RunEnd:
            del self._prefixes[ref.run_id]

    async def ask(self, ref: RunRef, request: PermissionRequest) -> Decision:
        params: dict[str, Any] = {"runId": ref.run_id, "sessionId": ref.session_id}
        if ref.parent_run_id is not None:
            params["parentRunId"] = ref.parent_run_id
        wire = event_to_dict(request)
        del wire["type"]
        params.update(wire)
        rid = request.request_id
        answer = await self.conn.ask(rid, "agent/permission", params)
        while True:
            option_id, new_text = chosen_answer(answer)
            problem = new_text_problem(request, option_id, new_text)
            if problem is None:
                return Decision(option_id, new_text=new_text)
            # refused, and nothing is lost: the error goes back under the prompt's id, which stays open
            error = RpcError(INVALID_PARAMS, f"invalid params: {problem}", {"code": "invalid_params"})
            self.conn.reply_error(rid, error)
            answer = await self.conn.ask(rid)

    def text_files(self, scope: FileScope) -> DaemonTextFiles:
        return DaemonTextFiles(self, scope)

    async def request(self, method: str, params: dict[str, Any], msg_id: str) -> Any:
        """One request to the client; its answer. Cancelled: withdrawn with `$/cancelRequest`."""
        return await self.conn.ask(msg_id, method, params)
