# Concept: path safety — resolving a model-given path against the workspace and classifying scope and protection.
"""Resolve tool paths: inside/outside the workspace (after symlinks), and whether the path is a protected secret."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kgent.core.errors import KgentError

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_SSH_KEY = re.compile(r"^id_(rsa|dsa|ecdsa|ed25519|xmss)(_sk)?(-cert)?(\.pub)?$")

# The same names as globs (case-insensitive, a little wider for ssh keys), for searches that must skip them.
PROTECTED_GLOBS = (".git", ".env*", "*.pem", "*.key", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "id_xmss*")


class PathError(KgentError):
    """A path a tool cannot use."""

    code = "invalid_path"


class PathOutsideWorkspace(PathError):
    """The path leaves the workspace (by `..`, an absolute path or a symlink) and leaving was not allowed."""

    code = "path_outside_workspace"


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    """A classified path: `rel` is posix and workspace-relative when inside, else the absolute path."""

    abs: Path
    rel: str
    inside: bool
    protected: bool


def is_protected_name(parts: tuple[str, ...]) -> bool:
    """Whether path components name a secret (.env*, *.pem, *.key, ssh keys) or git internals."""
    for i, raw in enumerate(parts):
        part = raw.lower()
        if part == ".git":
            return True
        if i == len(parts) - 1:
            if part.startswith(".env"):  # .env, .env.local, .envrc …
                return True
            if part.endswith((".pem", ".key")) or _SSH_KEY.match(part):
                return True
    return False


def _clean(raw_path: str) -> str:
    path = _UNICODE_SPACES.sub(" ", raw_path)
    if path.startswith("@"):
        path = path[1:]
    if path == "~" or path.startswith("~/"):
        path = os.path.expanduser(path)
    return path


def _under(path: str, root: str) -> str | None:
    """Posix path of `path` relative to `root`, or None when it is not under it."""
    if path == root:
        return "."
    prefix = root if root.endswith(os.sep) else root + os.sep
    if path.startswith(prefix):
        return PurePosixPath(*Path(path[len(prefix):]).parts).as_posix()
    return None


@functools.lru_cache(maxsize=64)
def _realpath_of_root(ws: str) -> str:
    """The workspace root's real path: asked for every path of every call, and the root does not move under a
    run (the kernel resolves it when the run is created), so it is resolved once per process."""
    return os.path.realpath(ws)


def classify_path(workspace: Path, raw_path: str) -> ResolvedPath:
    """Resolve and classify without raising; a path with a NUL byte classifies as outside and protected."""
    ws = os.path.abspath(os.path.expanduser(str(workspace)))
    if "\x00" in raw_path:
        return ResolvedPath(Path(ws), raw_path.replace("\x00", "\\0"), inside=False, protected=True)
    cleaned = _clean(raw_path) or "."
    lexical = os.path.normpath(os.path.join(ws, cleaned))
    ws_real = _realpath_of_root(ws)
    real = os.path.realpath(lexical)  # resolves through the nearest existing parent, dangling links included
    rel_real = _under(real, ws_real)
    if rel_real is None:
        return ResolvedPath(Path(real), Path(real).as_posix(), inside=False, protected=is_protected_name(Path(real).parts))
    rel = _under(lexical, ws) or _under(lexical, ws_real) or rel_real
    parts = PurePosixPath(rel).parts if rel != "." else ()
    protected = is_protected_name(parts) or is_protected_name(PurePosixPath(rel_real).parts if rel_real != "." else ())
    return ResolvedPath(Path(lexical), rel, inside=True, protected=protected)


def resolve(workspace: Path, raw_path: str, *, allow_outside: bool) -> ResolvedPath:
    """Classify, then raise PathError for a NUL byte or PathOutsideWorkspace when leaving is not allowed."""
    if "\x00" in raw_path:
        raise PathError("Path contains a NUL byte")
    if not raw_path.strip():
        raise PathError("Path is empty")
    resolved = classify_path(workspace, raw_path)
    if not resolved.inside and not allow_outside:
        raise PathOutsideWorkspace(
            f"Path {raw_path!r} resolves to {resolved.rel}, outside the workspace {workspace}",
        )
    return resolved
