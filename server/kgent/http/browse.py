"""The web client's project picker: the directories under the allowed workspace roots (`--workspace-root`), one level
at a time, symlinks resolved; nothing outside a root is listed or named."""

from __future__ import annotations

import os
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from kgent.http.front import Front, current
from kgent.http.guard import WorkspaceAllowlist
from kgent.service.errors import NOT_FOUND, ServiceError

router = APIRouter()
MAX_ENTRIES = 500  # a directory with more subdirectories lists the first ones (sorted) and says it cut


def listing(roots: tuple[str, ...], path: str | None) -> dict[str, Any]:
    """`path`'s subdirectories (realpaths under a root, hidden ones left out), or the roots when `path` is None."""
    if path is None:
        return {
            "path": None,
            "parent": None,
            "roots": list(roots),
            "directories": _named(roots),
            "truncated": False,
        }
    allow = WorkspaceAllowlist(roots)
    allow(path)  # 403 workspace_not_allowed outside the roots (symlinks resolved)
    real = os.path.realpath(path)
    if not os.path.isdir(real):
        raise ServiceError(NOT_FOUND, f"no directory {path}", "directory_not_found")
    found: list[str] = []
    with os.scandir(real) as entries:
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=True):
                continue
            target = os.path.realpath(entry.path)
            if allow.allows(target):
                found.append(target)
    found.sort(key=lambda p: os.path.basename(p).lower())
    parent = os.path.dirname(real)
    return {
        "path": real,
        "parent": parent if real not in roots and allow.allows(parent) else None,
        "roots": list(roots),
        "directories": _named(found[:MAX_ENTRIES]),
        "truncated": len(found) > MAX_ENTRIES,
    }


def _named(paths: tuple[str, ...] | list[str]) -> list[dict[str, str]]:
    return [{"name": os.path.basename(p) or p, "path": p} for p in paths]


@router.get("/api/directories", tags=["server"])
async def directories(
    front: Annotated[Front, Depends(current)], path: Annotated[str | None, Query()] = None
) -> dict[str, Any]:
    """The subdirectories of `path` (absolute, under a workspace root), or the roots themselves without it."""
    return listing(front.config.workspace_roots, path)
