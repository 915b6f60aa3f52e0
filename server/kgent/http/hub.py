"""Hub: the HTTP front's run port (kgent.service.runs) — every run's events kept in order for any number of SSE readers (replay by seq),
and the approvals waiting for an answer from any client (the first answer wins). An ended run's events are also
archived next to the sessions (one JSONL file per run), so they replay after the run left memory or the server
restarted."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgent.core.events import Event, PermissionRequest, RunEnd, ToolUpdate, event_to_dict
from kgent.service.runs import Decision, FileScope, RunRef
from kgent.service.wire import chosen_answer

log = logging.getLogger("kgent.http")

KEEP_ENDED = 256  # ended runs whose events stay in memory for replay …
KEEP_ENDED_EVENTS = 1_000_000  # … and at most this many of their events (older ones replay from the archive)
KEEP_ARCHIVED = 2000  # ended runs whose events stay on disk
KEEP_CLOSED = 4096  # answered / withdrawn approvals remembered (a late answer gets 409, not 404)
_encode = json.JSONEncoder(separators=(",", ":"), default=str).encode
_RUN_ID = re.compile(r"run-[0-9a-f]{6,64}")


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
    request: PermissionRequest | None = field(default=None, repr=False)


class Hub:
    """Implements kgent.service.runs.RunPort for HTTP clients: events as SSE, prompts as pending approvals."""

    def __init__(self, archive: Path | None = None) -> None:
        self.archive = archive
        self._writes: set[asyncio.Task[None]] = set()
        self.logs: dict[str, RunLog] = {}
        self._subs: set[str] = set()  # live sub-agent runs, whose logs opened with their first event
        self._ended: OrderedDict[str, int] = OrderedDict()  # ended runs in memory → their event counts
        self._ended_events = 0
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
        """The run's forwarding stopped: archive its events; keep them in memory within KEEP_ENDED(_EVENTS)."""
        log = self.logs.get(run_id)
        if log is None:
            return
        log.end()
        if self.archive is not None:
            task = asyncio.get_running_loop().create_task(
                asyncio.to_thread(self._save, log.run_id, list(log.events))
            )
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)
        self._ended[run_id] = len(log.events)
        self._ended_events += len(log.events)
        while len(self._ended) > KEEP_ENDED or self._ended_events > KEEP_ENDED_EVENTS:
            old, count = self._ended.popitem(last=False)
            self._ended_events -= count
            self.logs.pop(old, None)  # its id stays in session_runs: session streams read it from the archive

    def _save(self, run_id: str, events: list[str]) -> None:
        """Write an ended run's events to the archive (a worker thread), keeping the newest KEEP_ARCHIVED runs."""
        assert self.archive is not None
        try:
            self.archive.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp = self.archive / f".{run_id}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write("\n".join(events) + "\n")
            tmp.replace(self.archive / f"{run_id}.jsonl")
            files = sorted(self.archive.glob("run-*.jsonl"), key=lambda p: p.stat().st_mtime)
            for old in files[: max(0, len(files) - KEEP_ARCHIVED)]:
                old.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not archive the events of %s: %s", run_id, exc)

    async def forget_session(self, session_id: str) -> None:
        """A deleted session: drop its ended runs' logs, here and in the archive."""
        runs = self.session_runs.pop(session_id, [])
        for run_id in runs:
            log_ = self.logs.get(run_id)
            if log_ is not None and log_.ended:
                del self.logs[run_id]
                self._ended_events -= self._ended.pop(run_id, 0)
        await self.flush()  # an archive write under way would bring a file back
        if self.archive is not None:
            await asyncio.to_thread(self._unarchive, session_id, runs)

    def _unarchive(self, session_id: str, runs: list[str]) -> None:
        assert self.archive is not None
        for path in self.archive.glob("run-*.jsonl"):
            try:
                if path.stem not in runs:
                    with path.open(encoding="utf-8") as f:
                        if json.loads(f.readline())["sessionId"] != session_id:
                            continue
                path.unlink(missing_ok=True)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.debug("not looking at %s: %s", path.name, exc)

    async def find(self, run_id: str) -> RunLog | None:
        """The run's log: in memory, or (an ended run) from the archive; None if neither has it."""
        found = self.logs.get(run_id)
        if found is not None or self.archive is None or not _RUN_ID.fullmatch(run_id):
            return found
        path = self.archive / f"{run_id}.jsonl"
        try:
            text = await asyncio.to_thread(path.read_text, encoding="utf-8")
        except OSError:
            return None
        events = text.splitlines()
        if not events:
            return None
        first = json.loads(events[0])
        archived = RunLog(run_id, first["sessionId"])
        archived.events = events
        archived.ended = True
        return archived

    async def flush(self) -> None:
        """Wait for the archive writes under way (at shutdown)."""
        if self._writes:
            await asyncio.wait(list(self._writes), timeout=10)

    async def next_run(self, session_id: str) -> None:
        """Until a new run of `session_id` is registered."""
        waiter = asyncio.get_running_loop().create_future()
        waiters = self._session_waiters.setdefault(session_id, [])
        waiters.append(waiter)
        try:
            await waiter
        finally:  # a reader that left (or was woken) leaves nothing behind for its session id
            if waiter in waiters:
                waiters.remove(waiter)
            if not waiters and self._session_waiters.get(session_id) is waiters:
                del self._session_waiters[session_id]

    def send(self, ref: RunRef, seq: int, event: Event) -> None:
        run_id = ref.run_id
        params: dict[str, Any] = {"runId": run_id, "sessionId": ref.session_id}
        if ref.parent_run_id is not None:
            params["parentRunId"] = ref.parent_run_id
        params["seq"] = seq
        params["event"] = event_to_dict(event)
        log = self.logs.get(run_id)
        if log is None:  # a sub-agent's run (the `task` tool): its own stream, not one of the session's runs
            log = self.logs[run_id] = RunLog(run_id, ref.session_id)
            self._subs.add(run_id)
        log.append(seq, _encode(params))
        if type(event) is ToolUpdate and "runId" in event.details and event.status == "in_progress":
            # a task call names its sub-run before the sub-run's first event: its stream exists from here, so a
            # page that follows it at once waits for its events instead of finding no such run
            sub = event.details["runId"]
            if isinstance(sub, str) and sub not in self.logs:
                self.logs[sub] = RunLog(sub, ref.session_id)
                self._subs.add(sub)
        if run_id in self._subs and type(event) is RunEnd:
            self._subs.discard(run_id)
            self.closed_run(run_id)

    # -- approvals --------------------------------------------------------------------------------------------------
    async def ask(self, ref: RunRef, request: PermissionRequest) -> Decision:
        """Pending until a client answers (`answer`); withdrawn when cancelled."""
        params: dict[str, Any] = {"runId": ref.run_id, "sessionId": ref.session_id}
        if ref.parent_run_id is not None:
            params["parentRunId"] = ref.parent_run_id
        wire = event_to_dict(request)
        del wire["type"]
        params.update(wire)
        msg_id = request.request_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = Pending(params, future, request)
        try:
            option_id, new_text = chosen_answer(await future)
            return Decision(option_id, new_text=new_text)
        except asyncio.CancelledError:
            if self.pending.pop(msg_id, None) is not None:
                self._close(msg_id, "withdrawn")
            raise

    def text_files(self, scope: FileScope) -> None:
        """HTTP clients serve no buffers: the runs read and write the disk."""
        return None

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
