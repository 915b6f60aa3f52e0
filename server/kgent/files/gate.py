# Concept: the one files gate — every path Kgent itself reads or writes (for a tool, to build a request, or for the
# person) is admitted here: inside its root after symlinks, not protected (the protected names, secrets, `.git`
# internals), not multiply hard-linked, a regular file, size-capped — or refused with a reason a person reads.
"""`admit` decides for one path under one root; `read_file` opens what it admitted and checks the open file again;
`walk`, `names` and `listing` list directories for searches, globs and folders of Kgent's own; `GatedFiles`
(kgent.files.gatedops) puts the same decision in front of a FileOps. Nothing else in Kgent opens a workspace path.
Stdlib only, light enough for the daemon's boot path."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kgent.files.audit import gated
from kgent.files.configs import configures
from kgent.files.ignore import walk_files
from kgent.files.paths import classify_path

Why = Literal["outside", "protected", "hardlinked", "configures", "not_regular", "too_large"]

MAX_BYTES = 64 * 1024 * 1024  # the most any one read through the gate returns

_SAID: dict[Why, str] = {
    "outside": "it is outside {root} (after symlinks)",
    "protected": "it is a protected file (secrets, keys and .git internals need your approval)",
    "hardlinked": "it has more than one hard link (its other names may be anywhere, so it is protected)",
    "configures": "it configures Kgent or runs code later outside the sandbox (writing it needs your approval)",
    "not_regular": "it is not a regular file",
    "too_large": "it is larger than {limit} bytes",
}


class Refused(PermissionError):
    """The gate refused a path; `why` is the kind of refusal, `shown` the path as a person reads it, and the message
    (also `strerror`, so a tool's `Cannot read x: …` says it) why."""

    def __init__(self, why: Why, shown: str, reason: str) -> None:
        super().__init__(errno.EACCES, reason, shown)
        self.why: Why = why
        self.shown = shown
        self.reason = reason
        self.shown_name = shown  # a listing's entry name, where a listing refused it

    def __str__(self) -> str:
        return f"{self.shown}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Admitted:
    """A path the gate let through: `abs` to open (symlinks that stay inside are followed), `rel` as shown
    (root-relative posix when inside, else absolute), `inside` its root."""

    abs: Path
    rel: str
    inside: bool
    protected: bool
    configures: bool


def refusal(why: Why, shown: str, root: Path, limit: int = MAX_BYTES) -> Refused:
    return Refused(why, shown, "refused: " + _SAID[why].format(root=root, limit=limit))


def admit(
    root: Path,
    raw: str | os.PathLike[str],
    *,
    write: bool = False,
    outside_ok: bool = False,
    protected_ok: bool = False,
) -> Admitted:
    """Whether Kgent may touch `raw` (relative to `root`, or absolute): inside `root` after symlinks unless
    `outside_ok`, not protected or hard-linked unless `protected_ok`, and — for a write — not a file that configures
    Kgent or runs code later unless `protected_ok` (an approval that saw it). Raises Refused; touches no file."""
    text = os.fspath(raw)
    where = classify_path(root, text)
    if "\x00" in text or not where.inside and not outside_ok:
        raise refusal("outside", where.rel, root)
    if where.protected and not protected_ok:
        raise refusal("hardlinked" if where.hardlinked else "protected", where.rel, root)
    config = where.inside and configures(where.rel)
    if write and config and not protected_ok:
        raise refusal("configures", where.rel, root)
    return Admitted(where.abs, where.rel, where.inside, where.protected, config)


def read_file(
    root: Path,
    raw: str | os.PathLike[str],
    *,
    limit: int = MAX_BYTES,
    outside_ok: bool = False,
    protected_ok: bool = False,
) -> tuple[bytes, os.stat_result]:
    """A file's first `limit` bytes (more than that: `too_large` unless the caller cuts, see `read_head`) and its
    stat, for Kgent's own reads (instructions, skills, rule files, prompt templates, config): admitted, then opened
    without following a last symlink and checked again on the open file — a regular file, one link, still inside.
    `outside_ok`: a file of the user's own (their config dir) may be a link to anywhere, but still not to a secret;
    `protected_ok`: for the person (review, change tracking of files a run was approved to change).
    FileNotFoundError when it is missing; Refused otherwise."""
    data, st = read_head(root, raw, limit=limit, outside_ok=outside_ok, protected_ok=protected_ok)
    if len(data) > limit:
        raise refusal("too_large", str(raw), root, limit)
    return data, st


def read_head(
    root: Path,
    raw: str | os.PathLike[str],
    *,
    limit: int,
    outside_ok: bool = False,
    protected_ok: bool = False,
) -> tuple[bytes, os.stat_result]:
    """As `read_file`, but a larger file gives its first `limit + 1` bytes (the caller says it was cut)."""
    admitted = admit(root, raw, outside_ok=outside_ok, protected_ok=protected_ok)
    real = os.path.realpath(admitted.abs)
    with gated():
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise refusal("not_regular", admitted.rel, root)
            if st.st_nlink > 1 and not protected_ok:
                raise refusal("hardlinked", admitted.rel, root)
            _still_inside(fd, root, outside_ok, protected_ok)
            chunks: list[bytes] = []
            left = limit + 1
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks), st
        finally:
            os.close(fd)


def _still_inside(fd: int, root: Path, outside_ok: bool, protected_ok: bool) -> None:
    """The open file is where the gate judged it (a directory swapped for a symlink meanwhile would move it)."""
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # no /proc here: the check before the open is all there is
        return
    admit(root, opened, outside_ok=outside_ok, protected_ok=protected_ok)


def is_file(root: Path, raw: str | os.PathLike[str], outside_ok: bool = False) -> bool:
    """Whether `raw` is an existing regular file the gate admits under `root` (symlinks followed inside)."""
    try:
        admitted = admit(root, raw, outside_ok=outside_ok)
        with gated():
            return stat.S_ISREG(os.stat(admitted.abs).st_mode)
    except (OSError, ValueError):
        return False


def listing(
    root: Path, raw: str | os.PathLike[str], *, outside_ok: bool = False
) -> tuple[list[str], Refused | None]:
    """The sorted entry names of a directory the gate admits under `root`; ([], the refusal) when it refuses the
    directory, ([], None) when it is no directory."""
    try:
        base = admit(root, raw, outside_ok=outside_ok)
    except Refused as refused:
        return [], refused
    try:
        with gated():
            return sorted(e.name for e in os.scandir(base.abs)), None
    except OSError:
        return [], None


def subdirectories(
    root: Path, raw: str | os.PathLike[str], *, outside_ok: bool = False
) -> tuple[list[Path], list[Refused]]:
    """The directories in `raw` (sorted) that the gate admits under `root`, and the refusals of those it does not
    (a link to a directory outside, unless `outside_ok`; a protected one): ([], []) when `raw` is no directory."""
    out: list[Path] = []
    refused: list[Refused] = []
    try:
        base = admit(root, raw, outside_ok=outside_ok)
        with gated():
            entries = sorted(e.name for e in os.scandir(base.abs))
    except OSError:
        return [], []
    for name in entries:
        path = Path(os.fspath(raw)) / name
        try:
            with gated():
                if not stat.S_ISDIR(os.stat(path).st_mode):
                    continue
            admit(root, path, outside_ok=outside_ok)
        except Refused as exc:
            exc.shown_name = name
            refused.append(exc)
            continue
        except OSError:
            continue
        out.append(path)
    return out, refused


def names(directory: str) -> list[str]:
    """The entry names of a directory a caller already judged physically inside its workspace (the shell's glob
    expansion), listed under the gate's mark."""
    with gated():
        return [e.name for e in os.scandir(directory)]


def walk(root: Path, *, ignore_from: Path | None = None) -> Iterator[str]:
    """`kgent.files.ignore.walk_files` (symlinks and `.git` skipped), each step under the gate's mark."""
    inner = walk_files(root, ignore_from=ignore_from)
    while True:
        with gated():
            try:
                rel = next(inner)
            except StopIteration:
                return
        yield rel


def read_walked(
    directory: Path, rel: str, *, limit: int = MAX_BYTES, protected_ok: bool = False
) -> bytes | None:
    """A file a walk found (not a symlink, not protected by name: the walker and the search checked), read under
    the gate's mark; None when it is not a regular file, has several links (unless `protected_ok`: a search of that
    very file was approved) or is larger than `limit`."""
    path = directory / rel
    with gated():
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1 and not protected_ok or st.st_size > limit:
                return None
            with os.fdopen(os.dup(fd), "rb") as f:
                return f.read(limit + 1)
        finally:
            os.close(fd)
