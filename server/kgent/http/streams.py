"""The SSE routes: a run's events (`id` = seq) and a session's runs one after another (`id` = runId:seq), replayed
from `Last-Event-ID` / `fromSeq` and then followed live (sse-starlette sends them, with heartbeats)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query
from fastapi.responses import Response
from sse_starlette import EventSourceResponse

from kgent.core.errors import SessionError, SessionNotFound
from kgent.http.front import Front, current
from kgent.service.errors import INVALID_PARAMS, NOT_FOUND, ServiceError

router = APIRouter()
FromSeq = Annotated[int | None, Query(alias="fromSeq", ge=0)]
LastEventId = Annotated[str | None, Header()]


_SEQ = re.compile(r"[0-9]{1,15}")  # ASCII digits only (`²`.isdigit() is True), and no 5 000-digit number
_SESSION_ID = re.compile(r"(.+):([0-9]{1,15})")


def _bad_last_event_id(form: str) -> ServiceError:
    return ServiceError(INVALID_PARAMS, f"Last-Event-ID must be {form}", "invalid_params")


def start_seq(from_seq: int | None, last_event_id: str | None) -> int:
    """Where a reader starts: after `Last-Event-ID` (the last seq it has), else `fromSeq`, else 0. A malformed
    `Last-Event-ID` (not ASCII digits, negative, longer than 15 digits) is invalid_params (400)."""
    if last_event_id is not None and last_event_id.strip():
        tail = last_event_id.strip()
        if not _SEQ.fullmatch(tail):
            raise _bad_last_event_id("an event's seq (a number)")
        return int(tail) + 1
    return max(from_seq or 0, 0)


def session_resume(last_event_id: str | None) -> tuple[str, int] | None:
    """A session stream's `Last-Event-ID` (`runId:seq`) as (run id, the seq to start from); None when absent."""
    if last_event_id is None or not last_event_id.strip():
        return None
    found = _SESSION_ID.fullmatch(last_event_id.strip())
    if found is None:
        raise _bad_last_event_id("runId:seq, the id of a session stream's event")
    return found.group(1), int(found.group(2)) + 1


def chunk(first: int, events: list[str], prefix: str = "") -> bytes:
    """SSE messages for `events` (seq `first` on): `id` is the seq (`runId:seq` on session streams)."""
    return "".join(f"id: {prefix}{first + k}\ndata: {e}\n\n" for k, e in enumerate(events)).encode()


def respond(front: Front, stream: AsyncIterator[bytes]) -> EventSourceResponse:
    return EventSourceResponse(
        stream, ping=front.config.heartbeat, sep="\n", headers={"X-Accel-Buffering": "no"}
    )


@router.get("/api/runs/{run_id}/events", tags=["runs"], response_class=Response)
async def run_events(
    run_id: str,
    front: Annotated[Front, Depends(current)],
    from_seq: FromSeq = None,
    last_event_id: LastEventId = None,
) -> EventSourceResponse:
    """SSE: the run's `agent/event` params, one message each, `id` = seq; replays from `Last-Event-ID` + 1 or
    `fromSeq`, then follows the run live; the stream ends after `run_end`."""
    run_log = await front.run_log(run_id)
    start = start_seq(from_seq, last_event_id)

    async def stream() -> AsyncIterator[bytes]:
        async for first, events in run_log.follow(start):
            yield chunk(first, events)

    return respond(front, stream())


@router.get("/api/sessions/{session_id}/events", tags=["sessions"], response_class=Response)
async def session_events(
    session_id: str,
    front: Annotated[Front, Depends(current)],
    run_id: Annotated[str | None, Query(alias="runId")] = None,
    from_seq: FromSeq = None,
    last_event_id: LastEventId = None,
) -> EventSourceResponse:
    """SSE: the events of the session's runs on this server, run after run (`id` = `runId:seq`). Starts with
    `runId` (from `fromSeq`), else the live run from its first event, else waits for the next run;
    `Last-Event-ID` (`runId:seq`) resumes after that event."""
    hub = front.hub
    resume = session_resume(last_event_id)
    if session_id not in hub.session_runs:
        await _session_exists(front, session_id)
    runs = hub.session_runs.get(session_id, [])
    index, start = len(runs), 0
    if resume is not None:
        if resume[0] in runs:
            index, start = runs.index(resume[0]), resume[1]
    elif run_id is not None:
        if run_id not in runs:
            raise ServiceError(NOT_FOUND, f"no run {run_id!r} of session {session_id} here", "run_not_found")
        index, start = runs.index(run_id), start_seq(from_seq, None)
    else:
        live_id = front.svc.live_run_id(session_id)
        if live_id in runs:
            index = runs.index(live_id)

    async def stream() -> AsyncIterator[bytes]:
        i, first_seq = index, start
        while True:
            known = hub.session_runs.get(session_id, [])
            if i >= len(known):
                await hub.next_run(session_id)
                continue
            run_log = await hub.find(known[i])
            if run_log is not None:
                async for first, events in run_log.follow(first_seq):
                    yield chunk(first, events, f"{run_log.run_id}:")
            i, first_seq = i + 1, 0

    return respond(front, stream())


async def _session_exists(front: Front, session_id: str) -> None:
    """404 `session_not_found` unless the store has the session (a stream then waits for its next run); nothing
    is remembered for an id that does not exist."""
    try:
        await front.svc.store.load(session_id)
    except SessionError as exc:
        if isinstance(exc, SessionNotFound) or exc.code == "invalid_session_id":
            raise ServiceError(NOT_FOUND, f"no session {session_id!r}", "session_not_found") from None
        raise
