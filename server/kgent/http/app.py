"""The FastAPI app: protocol.md's methods as routes over the shared Service, SSE event streams with replay, the
approvals any authorised client answers, and the web client at `/` (protocol-http.md)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from importlib import resources
from typing import Annotated, Any

from fastapi import Body, Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import ConfigDict

from kgent.core.errors import KgentError
from kgent.http import browse, streams
from kgent.http.front import Front, current, error_response
from kgent.http.guard import Guard, HttpConfig, cors_kwargs
from kgent.http.routes import add_routes
from kgent.http.security import Security, allowed_hosts
from kgent.service import wire as W
from kgent.service.errors import CONFLICT, INVALID_PARAMS, NOT_FOUND, ServiceError
from kgent.service.handshake import PROTOCOL_VERSION, SERVER_VERSION, ParamsError, initialize_result
from kgent.service.runs import new_text_problem
from kgent.service.wire.base import first_params_error


class RunParams(W.RunParams):
    """`agent/run`'s params, built now: FastAPI's adapter for a body model that is built at its first use (the wire
    models' defer_build) rebuilds it with a spurious pydantic warning (pydantic#12356)."""

    model_config = ConfigDict(defer_build=False)


FrontDep = Annotated[Front, Depends(current)]


def _payload(result: W.Payload) -> JSONResponse:
    return JSONResponse(result.wire())


def create_app(config: HttpConfig, env: Mapping[str, str]) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
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
    app.add_middleware(Security, hosts=allowed_hosts(config.host, env))  # outermost: Host check, headers

    @app.exception_handler(Exception)
    async def any_error(request: Request, exc: Exception) -> JSONResponse:
        return error_response(exc)

    # Errors in wire terms (ExceptionMiddleware answers them); anything else is a bug, logged under an incident id.
    @app.exception_handler(ServiceError)
    @app.exception_handler(KgentError)
    @app.exception_handler(ParamsError)
    async def service_error(request: Request, exc: Exception) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def bad_params(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{**e, "loc": tuple(e["loc"][1:])} for e in exc.errors()]  # without the leading "body"
        return error_response(first_params_error(errors))  # type: ignore[arg-type]

    app.include_router(streams.router)
    app.include_router(browse.router)

    # -- plain -------------------------------------------------------------------------------------------------------
    @app.get("/health", tags=["server"])
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/api/info", response_model=W.InitializeResult, tags=["server"])
    async def info(front: FrontDep) -> JSONResponse:
        """What `initialize` answers: server, protocol version and capabilities."""
        return JSONResponse(initialize_result(PROTOCOL_VERSION, front.svc.settings, front.env))

    @app.get("/api/workspaces", tags=["server"])
    async def workspaces() -> dict[str, list[str]]:
        """The directories runs may use (`--workspace-root`)."""
        return {"roots": list(config.workspace_roots)}

    # -- runs ------------------------------------------------------------------------------------------------------
    @app.post("/api/runs", response_model=W.RunResult, tags=["runs"])
    async def run(front: FrontDep, p: Annotated[RunParams, Body()]) -> JSONResponse:
        """`agent/run`: start a run; read its events at /api/runs/{runId}/events."""
        f = front.live()
        base = await f.base_entry(p)
        handle = await f.svc.start_run(p)
        f.started(handle, base)
        return _payload(W.RunResult(run_id=handle.run_id, session_id=handle.session_id))

    @app.get("/api/runs/{run_id}", tags=["runs"])
    async def run_info(front: FrontDep, run_id: str) -> dict[str, Any]:
        """A run this server keeps: live or not, how many events so far, the session entry it continued from."""
        run_log = await front.run_log(run_id)
        return {
            "runId": run_id,
            "sessionId": run_log.session_id,
            "live": not run_log.ended,
            "events": len(run_log.events),
            "baseEntryId": run_log.base_entry_id,
        }

    # -- sessions --------------------------------------------------------------------------------------------------
    @app.delete("/api/sessions/{session_id}", response_model=W.EmptyResult, tags=["sessions"])
    async def delete_session(front: FrontDep, session_id: str) -> JSONResponse:
        """`agent/deleteSession`: remove the session, and the archived events of its runs."""
        p = W.DeleteSessionParams.parse({"sessionId": session_id})
        f = front.live()
        await f.svc.delete_session(p.session_id)
        await f.hub.forget_session(p.session_id)
        return _payload(W.EmptyResult())

    @app.get("/api/sessions/{session_id}/images/{sha256}", tags=["sessions"])
    async def session_image(front: FrontDep, session_id: str, sha256: str) -> Response:
        """An image one of the session's user messages attached, by its sha256: the web client's thumbnails. Only an
        image an entry names is served, as the type the server read from its bytes when it was sent."""
        session = (await front.svc.session(session_id, branch_only=False)).wire()
        mime = next(
            (
                i["mimeType"]
                for e in session["entries"]
                if e["type"] == "message"
                for i in e["message"].get("images") or ()
                if i.get("sha256") == sha256
            ),
            None,
        )
        if mime is None:
            raise ServiceError(
                NOT_FOUND, f"no image {sha256[:80]!r} in session {session_id}", "image_not_found"
            )
        data = await front.svc.store.get_blob(session_id, sha256)
        # named by its hash, so it never changes: the browser keeps it
        return Response(
            data, media_type=mime, headers={"cache-control": "private, max-age=31536000, immutable"}
        )

    # -- approvals ---------------------------------------------------------------------------------------------------
    @app.get("/api/permissions", tags=["permissions"])
    async def permissions(
        front: FrontDep, run_id: Annotated[str | None, Query(alias="runId")] = None
    ) -> dict[str, Any]:
        """The open approvals (each the params of an `agent/permission` request), oldest first."""
        pending = front.hub.pending.values()
        return {"permissions": [p.params for p in pending if run_id is None or p.params["runId"] == run_id]}

    @app.post("/api/permissions/{request_id}", response_model=W.EmptyResult, tags=["permissions"])
    async def answer(
        front: FrontDep, request_id: str, body: Annotated[W.PermissionResult, Body()]
    ) -> JSONResponse:
        """The answer to one `agent/permission` request. The first answer wins; later ones (or an answer to a
        withdrawn request) get 409 `permission_closed`. A `newText` the request may not take is a 400 and the
        request stays open."""
        hub = front.hub
        pending = hub.pending.get(request_id)
        if pending is None:
            if request_id in hub.closed:
                raise ServiceError(
                    CONFLICT,
                    f"permission {request_id} was already {hub.closed[request_id]}",
                    "permission_closed",
                )
            raise ServiceError(NOT_FOUND, f"no permission request {request_id!r}", "permission_not_found")
        answer = W.answer_adapter().dump_python(body, mode="json", by_alias=True)
        problem = pending.request and new_text_problem(pending.request, *W.chosen_answer(answer))
        if problem:
            raise ServiceError(INVALID_PARAMS, f"invalid params: {problem}", "invalid_params")
        # An optionId that was not offered is a reject, as on every front (kgent.service.runs.decide).
        hub.answer(request_id, answer)
        return _payload(W.EmptyResult())

    # -- the routes the method table builds (cancel, steer, followUp, clearQueue, sessions, review, …) ----------
    add_routes(app)

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
