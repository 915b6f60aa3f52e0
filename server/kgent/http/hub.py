"""Hub: the HTTP front's Outbox — every run's events kept in order for any number of SSE readers (replay by seq),
and the approvals waiting for an answer from any client (the first answer wins)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

KEEP_ENDED = 256  # ended runs whose events stay in memory for replay
KEEP_CLOSED = 4096  # answered / withdrawn approvals remembered (a late answer gets 409, not 404)


class RunLog:
    """One run's events (`agent/event` params, compact JSON) by seq, and the readers waiting for the next one."""

    def __init__(self, run_id: str, session_id: str) -> None:
        self.run_id = run_id
        self.session_id = session_id
        self.events: list[str] = []
        self.ended = False
        self.base_entry_id: str | None = (
            None  # the session entry the run continued from (None: a new session)
        )
        self._waiters: list[asyncio.Future[None]] = []

    def append(self, seq: int, params: str) -> None:
        assert seq == len(self.events), f"run {self.run_id}: seq {seq} after {len(self.events)} events"
        self.events.append(params)
        self._wake()

    def end(self) -> None:
        """The run's forwarding stopped (its run_end is in, or it never will be): readers stop at the end."""
        self.ended = True
        self._wake()

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def changed(self) -> None:
        """Until the next event (or the end)."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter

    async def follow(self, start: int) -> AsyncIterator[tuple[int, list[str]]]:
        """(first seq, events) batches from seq `start` on, as they come, until the run's last event."""
        i = max(start, 0)
        while True:
            if i < len(self.events):
                batch = self.events[i:]
                yield i, batch
                i += len(batch)
                continue
            if self.ended:
                return
            await self.changed()


@dataclass
class Pending:
    """An approval waiting for an answer: the `agent/permission` params and the future the run awaits."""

    params: dict[str, Any]
    future: asyncio.Future[Any] = field(repr=False)


class Hub:
    """Implements kgent.service.runs.Outbox for HTTP clients."""

    def __init__(self) -> None:
        self.logs: dict[str, RunLog] = {}
        self._ended: OrderedDict[str, None] = OrderedDict()
        self.session_runs: dict[
            str, list[str]
        ] = {}  # session id → its runs' ids (this server's), in start order
        self._session_waiters: dict[str, list[asyncio.Future[None]]] = {}
        self.pending: dict[str, Pending] = {}
        self.closed: OrderedDict[str, str] = OrderedDict()  # request id → "answered" | "withdrawn"

    # -- runs ------------------------------------------------------------------------------------------------------
    def open(self, run_id: str, session_id: str) -> RunLog:
        """Register a run before its first event (so readers may subscribe at once)."""
        log = self.logs.get(run_id)
        if log is None:
            log = self.logs[run_id] = RunLog(run_id, session_id)
            self.session_runs.setdefault(session_id, []).append(run_id)
            for waiter in self._session_waiters.pop(session_id, []):
                if not waiter.done():
                    waiter.set_result(None)
        return log

    def closed_run(self, run_id: str) -> None:
        """The run's forwarding stopped: keep its events for replay, up to KEEP_ENDED ended runs."""
        log = self.logs.get(run_id)
        if log is None:
            return
        log.end()
        self._ended[run_id] = None
        while len(self._ended) > KEEP_ENDED:
            old, _ = self._ended.popitem(last=False)
            gone = self.logs.pop(old, None)
            if gone is not None:
                runs = self.session_runs.get(gone.session_id, [])
                if old in runs:
                    runs.remove(old)

    async def next_run(self, session_id: str) -> None:
        """Until a new run of `session_id` is registered."""
        waiter = asyncio.get_running_loop().create_future()
        self._session_waiters.setdefault(session_id, []).append(waiter)
        await waiter

    def send_event(self, run_id: str, seq: int, params: str) -> None:
        self.logs[run_id].append(seq, params)

    # -- approvals --------------------------------------------------------------------------------------------------
    def request(self, method: str, params: dict[str, Any], msg_id: str) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = Pending(params, future)
        return future

    def withdraw(self, msg_id: str) -> None:
        if self.pending.pop(msg_id, None) is not None:
            self._close(msg_id, "withdrawn")

    def _close(self, msg_id: str, how: str) -> None:
        self.closed[msg_id] = how
        while len(self.closed) > KEEP_CLOSED:
            self.closed.popitem(last=False)

    def answer(self, msg_id: str, answer: dict[str, Any]) -> bool:
        """Hand `answer` to the waiting run; False if the approval is no longer open (answered, withdrawn)."""
        pending = self.pending.pop(msg_id, None)
        if pending is None:
            return False
        self._close(msg_id, "answered")
        if not pending.future.done():
            pending.future.set_result(answer)
        return True
