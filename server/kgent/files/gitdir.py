# Concept: where the workspace's git repository physically is — what git itself would read from the workspace
# (`.git` directory, a `.git` file's `gitdir:`, symlinks, `commondir`, alternates, GIT_DIR-like variables). Stdlib.
"""`repository_dirs` lists the real directories git reads for the workspace; `outside_git_dir` names the first of
them (or of the GIT_DIR-like variables) that lies outside the workspace: then git commands read outside it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

from kgent.files.audit import gated

# Variables that point git at a repository, objects, an index or a work tree somewhere else.
GIT_LOCATION_VARIABLES: Final = (
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _read(path: str) -> str:
    try:
        with (
            gated(),
            open(path, encoding="utf-8", errors="replace") as f,
        ):  # git's own pointers, never returned
            return f.read(65536)
    except OSError:
        return ""


def repository_dirs(workspace: str | os.PathLike[str]) -> tuple[str, ...]:
    """The real (symlink-free) directories git reads for a workspace: its git directory (a `.git` directory, or what
    a `.git` file's `gitdir:` names), the common directory a `commondir` file names, and alternate object
    directories. Empty when the workspace has no `.git`."""
    ws = os.fspath(workspace)
    dot_git = os.path.join(ws, ".git")
    if not os.path.lexists(dot_git):
        return ()
    real = os.path.realpath(dot_git)
    if os.path.isdir(real):
        gitdir = real
    else:
        text = _read(real).strip()
        if not text.startswith("gitdir:"):
            return (real,)
        gitdir = os.path.realpath(os.path.join(ws, text[len("gitdir:") :].strip()))
    dirs = [gitdir]
    common = _read(os.path.join(gitdir, "commondir")).strip()
    if common:
        dirs.append(os.path.realpath(os.path.join(gitdir, common)))
    for d in list(dirs):
        objects = os.path.join(d, "objects")
        for line in _read(os.path.join(objects, "info", "alternates")).splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                dirs.append(os.path.realpath(os.path.join(objects, line)))
    return tuple(dict.fromkeys(dirs))


def enclosing_repository(workspace: str) -> str | None:
    """The `.git` of a directory above the workspace, which git finds when the workspace has none of its own."""
    current = os.path.dirname(workspace)
    while True:
        candidate = os.path.join(current, ".git")
        if os.path.lexists(candidate):
            return os.path.realpath(candidate)
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def outside_git_dir(workspace: str | os.PathLike[str], env: Mapping[str, str]) -> str | None:
    """The first place outside the workspace that git, run in it with `env`, would read its repository from: a
    GIT_DIR-like variable, the git directory or anything it links to, or — when the workspace has no `.git` — the
    repository of a directory above it; None when all of it is inside."""
    ws = os.path.realpath(os.fspath(workspace))
    for name in GIT_LOCATION_VARIABLES:
        for value in env.get(name, "").split(os.pathsep) if env.get(name) else ():
            real = os.path.realpath(os.path.join(ws, value))
            if not _inside(real, ws):
                return real
    if not os.path.lexists(os.path.join(ws, ".git")):
        return enclosing_repository(ws)
    for d in repository_dirs(ws):
        if not _inside(d, ws):
            return d
        for directory in (d, os.path.join(d, "objects"), os.path.join(d, "refs")):
            linked = _linked_out(directory, ws)
            if linked is not None:  # `objects`, `refs`, `HEAD`, a pack directory… linked to somewhere else
                return linked
    return None


def _linked_out(directory: str, ws: str) -> str | None:
    try:
        with gated():
            entries = list(os.scandir(directory))
    except OSError:
        return None
    for entry in entries:
        if entry.is_symlink():
            real = os.path.realpath(entry.path)
            if not _inside(real, ws):
                return real
    return None
