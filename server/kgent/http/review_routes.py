"""Temporary: the three routes the web client's review and queue use, until the one-method-table change ("table")
lands the real ones (drop this module and its include line in app.py then)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query
from fastapi.responses import JSONResponse

from kgent.http.front import Front, current
from kgent.service import wire as W

router = APIRouter()
FrontDep = Annotated[Front, Depends(current)]


@router.post("/api/runs/{run_id}/clearQueue", tags=["runs"])
async def clear_queue(front: FrontDep, run_id: str) -> JSONResponse:
    front.live().svc.clear_queue(run_id)
    return JSONResponse({})


@router.get("/api/sessions/{session_id}/review", tags=["sessions"])
async def review(
    front: FrontDep, session_id: str, run_id: Annotated[str | None, Query(alias="runId")] = None
) -> JSONResponse:
    p = W.ReviewParams.parse({"sessionId": session_id, "runId": run_id})
    return JSONResponse((await front.svc.review(p)).wire())


@router.post("/api/sessions/{session_id}/review", tags=["sessions"])
async def apply_review(
    front: FrontDep, session_id: str, body: Annotated[dict[str, Any], Body()]
) -> JSONResponse:
    p = W.ApplyReviewParams.parse({**body, "sessionId": session_id})
    return JSONResponse((await front.live().svc.apply_review(p)).wire())
