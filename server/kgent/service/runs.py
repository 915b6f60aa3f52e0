"""RunHandle: one AgentRun as a front serves it — its events become `agent/event` params (seq gap-free), its
permission prompts become requests to the client, and prompts that became moot are withdrawn. The front's Outbox
carries them: JSON-RPC frames on stdio (kgent.daemon), SSE streams and pending approvals over HTTP (kgent.http).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from kgent.core.events import (
    MessageDelta,
    PermissionRequest,
    PermissionResolved,
    RunEnd,
    SubRunEvent,
    event_to_dict,
)
from kgent.kernel.run import AgentRun
from kgent.service.wire import chosen_option

log = logging.getLogger("kgent.daemon")

_encode = json.JSONEncoder(separators=(",", ":"), default=str).encode


class Outbox(Protocol):
    """A front's side of the wire, as a run needs it."""

    def send_event(self, run_id: str, seq: int, params: str) -> None:
        """Deliver one `agent/event` (`params`: its params object, compact JSON)."""
        ...

    def request(self, method: str, params: dict[str, Any], msg_id: str) -> asyncio.Future[Any]: ...

    def withdraw(self, msg_id: str) -> None: ...


class RunHandle:
    """Forwards one run's events in order and owns its open prompts. `start()` only after the `agent/run` reply
    has been written (protocol.md: the reply precedes the run's first event)."""

    def __init__(self, run: AgentRun, out: Outbox, on_end: Callable[[RunHandle], None]) -> None:
        self.run = run
        self.run_id = run.run_id
        self.session_id = run.session_id
        self.out = out
        self.on_end = on_end
        # For a run that creates a session: its workspace, and how to create the session if the run ends (say,
        # cancelled) before writing it, so the sessionId the client was given stays usable (protocol.md, agent/cancel).
        self.new_session_in: str | None = None
        self.keep_session: Callable[[], Awaitable[None]] | None = None
        self.seq = 0
        self.status: str | None = None
        self.prompts: dict[str, asyncio.Task[None]] = {}
        self.subs: dict[str, _SubRun] = {}  # live sub-agent runs (the `task` tool) of this run, by run id
        self.task: asyncio.Task[None] | None = None
        # Set once the run has opened its session (run_start: a new session is on disk) or has ended.
        self.opened = asyncio.Event()
        self._prefix = f'{{"runId":{_encode(self.run_id)},"sessionId":{_encode(self.session_id)},"seq":'

    def start(self) -> None:
        if self.task is None:
            log.info("run %s started (session %s)", self.run_id, self.session_id)
            self.task = asyncio.get_running_loop().create_task(
                self._forward(), name=f"kgent-forward-{self.run_id}"
            )

    @property
    def live(self) -> bool:
        return not self.run.done

    def _send(self, event: dict[str, Any]) -> None:
        seq = self.seq
        self.seq += 1
        self.out.send_event(self.run_id, seq, f'{self._prefix}{seq},"event":{_encode(event)}}}')

    def _send_delta(self, event: MessageDelta) -> None:
        """The hot path (one event per streamed token): the same bytes as `_send(event_to_dict(event))`, cheaper."""
        seq = self.seq
        self.seq += 1
        self.out.send_event(
            self.run_id,
            seq,
            f'{self._prefix}{seq},"event":{{"type":"message_delta","kind":"{event.kind}",'
            f'"delta":{_encode(event.delta)}}}}}',
        )

    async def _forward(self) -> None:
        try:
            async for event in self.run:
                if type(event) is MessageDelta:
                    self._send_delta(event)
                    continue
                if type(event) is SubRunEvent:
                    self._forward_sub(event)
                    continue
                kind = event.type
                if kind == "run_start":
                    self.opened.set()
                if isinstance(event, RunEnd):
                    self.status = event.result.status
                    end = event.result
                    log.info(
                        "run %s ended %s (%s) after %d turn(s), %d file(s) changed",
                        self.run_id,
                        end.status,
                        end.stop_reason,
                        end.turns,
                        len(end.changed_paths),
                    )
                    self.withdraw_all()  # before run_end (protocol.md, ordering 4)
                    if not self.opened.is_set() and self.keep_session is not None:
                        await self.keep_session()  # before run_end: the client may resume at once
                    self.opened.set()
                elif (
                    isinstance(event, PermissionResolved)
                    and event.request_id is not None
                    and event.request_id in self.prompts
                ):
                    self.withdraw(event.request_id)  # timed out
                data = event_to_dict(event)
                self._send(data)
                if kind == "permission_request" and not self.run.cancel_requested:
                    self._ask(data)
        except Exception:  # a daemon bug: the client must still see the run end
            log.exception("forwarding the events of %s failed", self.run_id)
            self.run.cancel()
            self.withdraw_all()
            if self.status is None:
                self.status = "failed"
                self._send(
                    {
                        "type": "run_end",
                        "status": "failed",
                        "stopReason": "error",
                        "text": "",
                        "error": {
                            "code": "internal_error",
                            "message": "the daemon failed to forward this run",
                        },
                        "changedPaths": [],
                        "patch": "",
                        "usage": {
                            "inputTokens": 0,
                            "outputTokens": 0,
                            "cacheReadTokens": 0,
                            "cacheWriteTokens": 0,
                        },
                        "sessionId": self.session_id,
                        "turns": 0,
                    }
                )
        finally:
            self.opened.set()
            self.withdraw_all()
            self.on_end(self)

    def _forward_sub(self, wrapped: SubRunEvent) -> None:
        """A sub-agent's event: an `agent/event` of its own run (own seq, `parentRunId`), its prompts asked as its."""
        sub = self.subs.get(wrapped.run_id)
        if sub is None:
            sub = self.subs[wrapped.run_id] = _SubRun(wrapped.run_id, wrapped.parent_run_id, self.session_id)
        event = wrapped.event
        if isinstance(event, RunEnd):
            for rid in sub.prompts:
                self.withdraw(rid)  # before its run_end, as for any run
            del self.subs[wrapped.run_id]
        elif isinstance(event, PermissionResolved) and event.request_id in self.prompts:
            self.withdraw(event.request_id)  # timed out
        data = event_to_dict(event)
        seq, params = sub.frame(data)
        self.out.send_event(sub.run_id, seq, params)
        if isinstance(event, PermissionRequest) and not self.run.cancel_requested:
            sub.prompts.append(event.request_id)
            self._ask(data, sub)

    def cancel_sub(self, run_id: str) -> bool | None:
        """Cancel one live sub-agent run of this run (its parent goes on: the `task` call fails); None if there is no
        such sub-run here."""
        if run_id not in self.subs:
            return None
        child = self.run.sub_run(run_id)
        if child is None or child.done:
            return False
        for rid in self.subs[run_id].prompts:
            self.withdraw(rid)
        child.cancel()
        return True

    # -- permissions --------------------------------------------------------------------------------------------
    def _ask(self, event: dict[str, Any], sub: _SubRun | None = None) -> None:
        rid = event["requestId"]
        params = {"runId": self.run_id, "sessionId": self.session_id}
        if sub is not None:
            params.update(runId=sub.run_id, parentRunId=sub.parent_run_id)
        params.update((k, v) for k, v in event.items() if k != "type")
        future = self.out.request("agent/permission", params, rid)
        self.prompts[rid] = asyncio.get_running_loop().create_task(self._await_answer(rid, future))

    async def _await_answer(self, rid: str, future: asyncio.Future[Any]) -> None:
        try:
            option = chosen_option(await future)
        except asyncio.CancelledError:
            raise
        except Exception:  # an error reply (or a broken one) is a reject
            option = "reject_once"
        self.prompts.pop(rid, None)
        if not self.run.resolve_permission(rid, option):
            log.debug("answer to %s came after it was closed", rid)

    def withdraw(self, rid: str) -> None:
        task = self.prompts.pop(rid, None)
        if task is not None:
            task.cancel()
            self.out.withdraw(rid)

    def withdraw_all(self) -> None:
        for rid in list(self.prompts):
            self.withdraw(rid)

    # -- control ------------------------------------------------------------------------------------------------
    def cancel(self) -> bool:
        """Cancel the run; its open prompts are withdrawn now. False if it had already ended."""
        if self.run.done:
            return False
        self.withdraw_all()
        self.run.cancel()
        return True


class _SubRun:
    """The wire side of one sub-agent run: its envelope (with `parentRunId`), its seq, its open prompts."""

    def __init__(self, run_id: str, parent_run_id: str, session_id: str) -> None:
        self.run_id = run_id
        self.parent_run_id = parent_run_id
        self.seq = 0
        self.prompts: list[str] = []
        self._prefix = (
            f'{{"runId":{_encode(run_id)},"sessionId":{_encode(session_id)},'
            f'"parentRunId":{_encode(parent_run_id)},"seq":'
        )

    def frame(self, event: dict[str, Any]) -> tuple[int, str]:
        """The event's seq and its `agent/event` params (compact JSON)."""
        seq = self.seq
        self.seq += 1
        return seq, f'{self._prefix}{seq},"event":{_encode(event)}}}'
