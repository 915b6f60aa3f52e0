"""The FastAPI app: protocol.md's methods as routes over the shared Service, SSE event streams with replay, the
approvals any authorised client answers, and the web client at `/` (protocol-http.md)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from importlib import resources
from typing import Annotated, Any

from fastapi import Body, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field, TypeAdapter
from sse_starlette import EventSourceResponse

from kgent.core.errors import KgentError
from kgent.http.guard import Guard, HttpConfig, WorkspaceAllowlist, cors_kwargs
from kgent.http.hub import Hub, RunLog
from kgent.service import wire as W
from kgent.service.errors import (
    CONFIG,
    CONFLICT,
    FAILED,
    INVALID_PARAMS,
    INVALID_REQUEST,
    NOT_FOUND,
    STORE,
    DaemonError,
    classify,
)
from kgent.service.handshake import PROTOCOL_VERSION, SERVER_VERSION, ParamsError, Settings, initialize_result
from kgent.service.runs import RunHandle
from kgent.service.service import Service
from kgent.service.wire.base import first_params_error
from kgent.service.wire.requests import PermissionSelected
from kgent.session.paths import state_dir

log = logging.getLogger("kgent.http")

STATUS = {
    INVALID_PARAMS: 400,
    INVALID_REQUEST: 400,
    CONFIG: 400,
    NOT_FOUND: 404,
    CONFLICT: 409,
    STORE: 500,
    FAILED: 502,
}
NAME_STATUS = {"workspace_not_allowed": 403, "missing_api_key": 500, "permission_closed": 409}
_ANSWER: TypeAdapter[Any] = TypeAdapter(W.PermissionResult)


class TextBody(BaseModel):
    """`agent/steer` and `agent/followUp` without the runId (it is in the path)."""

    text: str = Field(pattern=r"\S")


class ForkBody(BaseModel):
    entry_id: str = Field(alias="entryId", min_length=1)


class CompactBody(BaseModel):
    instructions: str | None = None
    provider: str | None = None
    model: str | None = None


class Front:
    """The app's state: the Service (runs, sessions, approvals) and the Hub its runs talk through."""

    def __init__(self, config: HttpConfig, env: Mapping[str, str]) -> None:
        self.config = config
        self.env = env
        self.hub = Hub()
        self.svc = Service(env, Settings(), self.hub)
        if self.svc.persistent:  # ended runs' events beside the sessions: they replay after a restart too
            self.hub.archive = state_dir() / "http-runs"
        self.svc.workspace_guard = WorkspaceAllowlist(config.workspace_roots)

    async def base_entry(self, p: W.RunParams) -> str | None:
        """The entry a run of `p` continues from (what a page shows before the run's own events)."""
        if p.session_id is None:
            return None
        if p.parent_entry_id is not None:
            return p.parent_entry_id
        try:
            return (await self.svc.store.load(p.session_id)).leaf_id
        except Exception:  # start_run reports it
            return None

    def started(self, handle: RunHandle, base_entry_id: str | None) -> RunLog:
        """Register the run's log, then forward its events into it."""
        run_log = self.hub.open(handle.run_id, handle.session_id)
        run_log.base_entry_id = base_entry_id
        on_end = handle.on_end

        def ended(h: RunHandle) -> None:
            on_end(h)
            self.hub.closed_run(h.run_id)

        handle.on_end = ended
        handle.start()
        return run_log


def _error(exc: BaseException) -> JSONResponse:
    err = classify(exc)
    status = NAME_STATUS.get(err.name) or STATUS.get(err.code, 500)
    return JSONResponse({"error": {"code": err.code, "message": err.message, "data": err.data()}}, status)


def _payload(result: W.Payload) -> JSONResponse:
    return JSONResponse(result.wire())


def _start_seq(from_seq: int | None, last_event_id: str | None) -> int:
    """Where a reader starts: after `Last-Event-ID` (the last seq it has), else `fromSeq`, else 0."""
    if last_event_id is not None and last_event_id.strip():
        tail = last_event_id.strip().rpartition(":")[2]
        if not tail.isdigit():
            raise DaemonError(INVALID_PARAMS, "Last-Event-ID must be an event's seq", "invalid_params")
        return int(tail) + 1
    return max(from_seq or 0, 0)


async def _run_log(front: Front, run_id: str) -> RunLog:
    run_log = await front.hub.find(run_id)
    if run_log is None:
        raise DaemonError(NOT_FOUND, f"no run {run_id!r} on this server (or no longer kept)", "run_not_found")
    return run_log


def _chunk(first: int, events: list[str], prefix: str = "") -> bytes:
    """SSE messages for `events` (seq `first` on): `id` is the seq (`runId:seq` on session streams)."""
    return "".join(f"id: {prefix}{first + k}\ndata: {e}\n\n" for k, e in enumerate(events)).encode()


def create_app(config: HttpConfig, env: Mapping[str, str]) -> FastAPI:
    front: Front | None = None

    def current() -> Front:
        assert front is not None, "the app's lifespan has not started"
        return front

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        nonlocal front
        front = Front(config, env)
        app.state.front = front
        asyncio.get_running_loop().run_in_executor(None, front.svc.warm_up)
        try:
            yield
        finally:
            front.svc.shut_down = True
            await front.svc.close(grace=2.0)
            await front.hub.flush()

    app = FastAPI(
        title="Kgent HTTP",
        version=SERVER_VERSION,
        description="protocol.md's methods over HTTP, events over SSE (protocol-http.md).",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    if config.cors_origins:
        app.add_middleware(CORSMiddleware, **cors_kwargs(config.cors_origins))
    app.add_middleware(Guard, token=config.token, max_body=config.max_body)

    @app.exception_handler(Exception)
    async def any_error(request: Request, exc: Exception) -> JSONResponse:
        return _error(exc)

    # Errors in wire terms (ExceptionMiddleware answers them); anything else is a bug, logged under an incident id.
    @app.exception_handler(DaemonError)
    @app.exception_handler(KgentError)
    @app.exception_handler(ParamsError)
    async def service_error(request: Request, exc: Exception) -> JSONResponse:
        return _error(exc)

    @app.exception_handler(RequestValidationError)
    async def bad_params(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{**e, "loc": tuple(e["loc"][1:])} for e in exc.errors()]  # without the leading "body"
        return _error(first_params_error(errors))  # type: ignore[arg-type]

    def live() -> Front:
        f = current()
        if f.svc.shut_down:
            raise DaemonError(INVALID_REQUEST, "the server is shutting down", "shutting_down")
        return f

    # -- plain -------------------------------------------------------------------------------------------------------
    @app.get("/health", tags=["server"])
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/api/info", response_model=W.InitializeResult, tags=["server"])
    async def info() -> JSONResponse:
        """What `initialize` answers: server, protocol version and capabilities."""
        f = current()
        return JSONResponse(initialize_result(PROTOCOL_VERSION, f.svc.settings, f.env))

    @app.get("/api/workspaces", tags=["server"])
    async def workspaces() -> dict[str, list[str]]:
        """The directories runs may use (`--workspace-root`)."""
        return {"roots": list(config.workspace_roots)}

    # -- runs ------------------------------------------------------------------------------------------------------
    @app.post("/api/runs", response_model=W.RunResult, tags=["runs"])
    async def run(p: Annotated[W.RunParams, Body()]) -> JSONResponse:
        """`agent/run`: start a run; read its events at /api/runs/{runId}/events."""
        f = live()
        base = await f.base_entry(p)
        handle = await f.svc.start_run(p)
        f.started(handle, base)
        return _payload(W.RunResult(run_id=handle.run_id, session_id=handle.session_id))

    @app.post("/api/runs/{run_id}/cancel", response_model=W.CancelResult, tags=["runs"])
    async def cancel(run_id: str) -> JSONResponse:
        return _payload(W.CancelResult(cancelled=live().svc.cancel(run_id)))

    @app.post("/api/runs/{run_id}/steer", response_model=W.EmptyResult, tags=["runs"])
    async def steer(run_id: str, body: TextBody) -> JSONResponse:
        live().svc.queue(run_id, body.text, steer=True)
        return _payload(W.EmptyResult())

    @app.post("/api/runs/{run_id}/followUp", response_model=W.EmptyResult, tags=["runs"])
    async def follow_up(run_id: str, body: TextBody) -> JSONResponse:
        live().svc.queue(run_id, body.text, steer=False)
        return _payload(W.EmptyResult())

    @app.get("/api/runs/{run_id}", tags=["runs"])
    async def run_info(run_id: str) -> dict[str, Any]:
        """A run this server keeps: live or not, how many events so far, the session entry it continued from."""
        run_log = await _run_log(current(), run_id)
        return {
            "runId": run_id,
            "sessionId": run_log.session_id,
            "live": not run_log.ended,
            "events": len(run_log.events),
            "baseEntryId": run_log.base_entry_id,
        }

    @app.get("/api/runs/{run_id}/events", tags=["runs"], response_class=Response)
    async def run_events(
        run_id: str,
        from_seq: Annotated[int | None, Query(alias="fromSeq", ge=0)] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> EventSourceResponse:
        """SSE: the run's `agent/event` params, one message each, `id` = seq; replays from `Last-Event-ID` + 1 or
        `fromSeq`, then follows the run live; the stream ends after `run_end`."""
        run_log = await _run_log(current(), run_id)
        start = _start_seq(from_seq, last_event_id)

        async def stream() -> AsyncIterator[bytes]:
            async for first, events in run_log.follow(start):
                yield _chunk(first, events)

        return EventSourceResponse(
            stream(), ping=config.heartbeat, sep="\n", headers={"X-Accel-Buffering": "no"}
        )

    # -- approvals ---------------------------------------------------------------------------------------------------
    @app.get("/api/permissions", tags=["permissions"])
    async def permissions(run_id: Annotated[str | None, Query(alias="runId")] = None) -> dict[str, Any]:
        """The open approvals (each the params of an `agent/permission` request), oldest first."""
        pending = current().hub.pending.values()
        return {"permissions": [p.params for p in pending if run_id is None or p.params["runId"] == run_id]}

    @app.post("/api/permissions/{request_id}", response_model=W.EmptyResult, tags=["permissions"])
    async def answer(request_id: str, body: Annotated[W.PermissionResult, Body()]) -> JSONResponse:
        """The answer to one `agent/permission` request. The first answer wins; later ones (or an answer to a
        withdrawn request) get 409 `permission_closed`."""
        hub = current().hub
        pending = hub.pending.get(request_id)
        if pending is None:
            if request_id in hub.closed:
                raise DaemonError(
                    CONFLICT,
                    f"permission {request_id} was already {hub.closed[request_id]}",
                    "permission_closed",
                )
            raise DaemonError(NOT_FOUND, f"no permission request {request_id!r}", "permission_not_found")
        outcome = getattr(body, "outcome", None)
        selected = outcome if isinstance(outcome, PermissionSelected) else body
        if isinstance(selected, PermissionSelected):
            offered = [o.get("optionId") for o in pending.params.get("options", [])]
            if selected.option_id not in offered:
                raise DaemonError(
                    INVALID_PARAMS,
                    f"invalid params: 'optionId' must be one of {', '.join(map(str, offered))}",
                    "invalid_params",
                )
        hub.answer(request_id, _ANSWER.dump_python(body, mode="json", by_alias=True))
        return _payload(W.EmptyResult())

    # -- sessions ----------------------------------------------------------------------------------------------------
    @app.get("/api/sessions", response_model=W.SessionsResult, tags=["sessions"])
    async def sessions(workspace: str) -> JSONResponse:
        p = W.SessionsParams.parse({"workspace": workspace})
        return _payload(await current().svc.sessions(p.workspace))

    @app.get("/api/sessions/{session_id}", response_model=W.SessionResult, tags=["sessions"])
    async def session(
        session_id: str, branch_only: Annotated[bool, Query(alias="branchOnly")] = False
    ) -> JSONResponse:
        return _payload(await current().svc.session(session_id, branch_only))

    @app.post("/api/sessions/{session_id}/fork", response_model=W.ForkResult, tags=["sessions"])
    async def fork(session_id: str, body: ForkBody) -> JSONResponse:
        return _payload(await live().svc.fork(session_id, body.entry_id))

    @app.post("/api/sessions/{session_id}/compact", response_model=W.CompactResult, tags=["sessions"])
    async def compact(session_id: str, body: CompactBody | None = None) -> JSONResponse:
        b = body or CompactBody()
        p = W.CompactParams.parse(
            {
                "sessionId": session_id,
                "instructions": b.instructions,
                "provider": b.provider,
                "model": b.model,
            }
        )
        return _payload(await live().svc.compact(p))

    @app.get("/api/sessions/{session_id}/events", tags=["sessions"], response_class=Response)
    async def session_events(
        session_id: str,
        run_id: Annotated[str | None, Query(alias="runId")] = None,
        from_seq: Annotated[int | None, Query(alias="fromSeq", ge=0)] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> EventSourceResponse:
        """SSE: the events of the session's runs on this server, run after run (`id` = `runId:seq`). Starts with
        `runId` (from `fromSeq`), else the live run from its first event, else waits for the next run;
        `Last-Event-ID` (`runId:seq`) resumes after that event."""
        hub = current().hub
        runs = hub.session_runs.get(session_id, [])
        index, start = len(runs), 0
        if last_event_id and ":" in last_event_id:
            last_run, _, _ = last_event_id.strip().rpartition(":")
            if last_run in runs:
                index, start = runs.index(last_run), _start_seq(None, last_event_id)
        elif run_id is not None:
            if run_id not in runs:
                raise DaemonError(
                    NOT_FOUND, f"no run {run_id!r} of session {session_id} here", "run_not_found"
                )
            index, start = runs.index(run_id), _start_seq(from_seq, None)
        else:
            live_id = current().svc.live_run_id(session_id)
            if live_id in runs:
                index = runs.index(live_id)

        async def stream() -> AsyncIterator[bytes]:
            i, first_seq = index, start
            while True:
                known = hub.session_runs.get(session_id, [])
                if i >= len(known):
                    await hub.next_run(session_id)
                    continue
                run_log = hub.logs.get(known[i])
                if run_log is not None:
                    async for first, events in run_log.follow(first_seq):
                        yield _chunk(first, events, f"{run_log.run_id}:")
                i, first_seq = i + 1, 0

        return EventSourceResponse(
            stream(), ping=config.heartbeat, sep="\n", headers={"X-Accel-Buffering": "no"}
        )

    # -- the web client ----------------------------------------------------------------------------------------------
    static = resources.files("kgent.http") / "static"

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        return Response((static / "index.html").read_bytes(), media_type="text/html; charset=utf-8")

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        return Response(status_code=204)

    app.mount("/static", StaticFiles(packages=[("kgent.http", "static")]), name="static")
    return app
