# Concept: path safety — resolving a model-given path against the workspace and classifying scope and protection.
"""Resolve tool paths: inside/outside the workspace (after symlinks), and whether the path is a protected secret."""

from __future__ import annotations

import functools
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kgent.core.errors import KgentError

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_SSH_KEY = re.compile(r"^id_(rsa|dsa|ecdsa|ed25519|xmss)(_sk)?(-cert)?(\.pub)?$")

# The same names as globs (case-insensitive, a little wider for ssh keys), for searches that must skip them.
PROTECTED_GLOBS = (
    ".git",
    ".env*",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "id_xmss*",
)


class PathError(KgentError):
    """A path a tool cannot use."""

    code = "invalid_path"


class PathOutsideWorkspace(PathError):
    """The path leaves the workspace (by `..`, an absolute path or a symlink) and leaving was not allowed."""

    code = "path_outside_workspace"


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    """A classified path: `rel` is posix and workspace-relative when inside, else the absolute path.

    `hardlinked`: a regular file with more than one hard link (outside `.git`): its other names may be anywhere, so
    it counts as protected — reading it without approval could read a file outside the workspace."""

    abs: Path
    rel: str
    inside: bool
    protected: bool
    hardlinked: bool = False


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
        rest = path[len(prefix) :]
        if os.sep == "/" and _is_clean(
            rest
        ):  # already what pathlib would make of it (asked per call, 4× each)
            return rest
        return PurePosixPath(*Path(rest).parts).as_posix()
    return None


def _is_clean(rel: str) -> bool:
    """Whether a relative posix path has no empty or `.` component (pathlib would leave it as it is)."""
    parts = rel.split("/")
    return "" not in parts and "." not in parts


def _parts(rel: str) -> tuple[str, ...]:
    """`PurePosixPath(rel).parts` for a workspace-relative posix path ("." → no parts), without pathlib when clean."""
    if rel == ".":
        return ()
    return tuple(rel.split("/")) if _is_clean(rel) else PurePosixPath(rel).parts


@functools.lru_cache(maxsize=64)
def _realpath_of_root(ws: str) -> str:
    """The workspace root's real path: asked for every path of every call, and the root does not move under a
    run (the kernel resolves it when the run is created), so it is resolved once per process."""
    return os.path.realpath(ws)


def is_hardlinked(real: str) -> bool:
    """A regular file with more than one hard link (False for anything that cannot be stat'ed)."""
    try:
        st = os.stat(real)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1


def classify_path(workspace: Path, raw_path: str, *, physical: bool = False) -> ResolvedPath:
    """Resolve and classify without raising; a path with a NUL byte classifies as outside and protected.

    The file tools open the lexically normalized path (`a/link/../b` is `a/b`); with `physical`, the path is
    resolved the way a shell resolves it — each prefix through its symlinks, so `link/..` is the link target's
    parent — and `@` and `~` are taken literally (the shell expands `~` before the classifier sees a word)."""
    ws = os.path.abspath(os.path.expanduser(str(workspace)))
    if "\x00" in raw_path:
        return ResolvedPath(Path(ws), raw_path.replace("\x00", "\\0"), inside=False, protected=True)
    cleaned = (raw_path if physical else _clean(raw_path)) or "."
    joined = os.path.join(ws, cleaned)
    lexical = os.path.normpath(joined)
    ws_real = _realpath_of_root(ws)
    try:  # through the nearest existing parent, dangling links too
        real = os.path.realpath(joined if physical else lexical)
    except OSError:  # a link that cannot be read (/proc/1/cwd as non-owner): nobody can tell where it leads
        return ResolvedPath(Path(lexical), Path(lexical).as_posix(), inside=False, protected=True)
    rel_real = _under(real, ws_real)
    if rel_real is None:
        return ResolvedPath(
            Path(real), Path(real).as_posix(), inside=False, protected=is_protected_name(Path(real).parts)
        )
    rel = rel_real if physical else (_under(lexical, ws) or _under(lexical, ws_real) or rel_real)
    parts = _parts(rel)
    real_parts = _parts(rel_real)
    lexical_rel = _under(lexical, ws) or _under(lexical, ws_real)
    lexical_parts = _parts(lexical_rel) if lexical_rel is not None else ()
    protected = is_protected_name(parts) or is_protected_name(real_parts) or is_protected_name(lexical_parts)
    hardlinked = ".git" not in real_parts and is_hardlinked(real)
    return ResolvedPath(
        Path(real if physical else lexical),
        rel,
        inside=True,
        protected=protected or hardlinked,
        hardlinked=hardlinked,
    )


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
