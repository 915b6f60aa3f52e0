"""Front: the HTTP app's state — the shared Service (runs, sessions, approvals) and the Hub its runs talk through —
and how a route reaches it and turns errors into responses."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import Request
from fastapi.responses import JSONResponse

from kgent.http.guard import HttpConfig, WorkspaceAllowlist
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
    ServiceError,
    classify,
)
from kgent.service.handshake import Settings
from kgent.service.runs import RunHandle
from kgent.service.service import Service
from kgent.session.paths import state_dir

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

    def live(self) -> Front:
        """This front, if it still takes requests that change something."""
        if self.svc.shut_down:
            raise ServiceError(INVALID_REQUEST, "the server is shutting down", "shutting_down")
        return self

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

    async def run_log(self, run_id: str) -> RunLog:
        found = await self.hub.find(run_id)
        if found is None:
            raise ServiceError(
                NOT_FOUND, f"no run {run_id!r} on this server (or no longer kept)", "run_not_found"
            )
        return found


def current(request: Request) -> Front:
    """The route's Front (a FastAPI dependency); set by the app's lifespan."""
    front: Front = request.app.state.front
    return front


def error_response(exc: BaseException) -> JSONResponse:
    """protocol.md's error object, with the HTTP status its code maps to."""
    err = classify(exc)
    status = NAME_STATUS.get(err.name) or STATUS.get(err.code, 500)
    return JSONResponse({"error": {"code": err.code, "message": err.message, "data": err.data()}}, status)
