"""Session blobs: the bytes a session's entries refer to by sha256 (images a user attached), stored once each,
outside the JSONL lines: `<id>.blobs/<sha256>` beside the session file (JsonlSessionStore) or in memory.

An entry names a blob by its hash; the same image attached twice is one file. A fork moves the leaf inside the
session, so its blobs stay; deleting the session deletes them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

from kgent.core.errors import SessionError

_HEX = frozenset("0123456789abcdef")
MAX_BLOB = 32 * 1024 * 1024  # bytes: more than any image a prompt may carry


def check_sha256(sha256: str) -> str:
    """A blob's name is its hash: 64 lowercase hex digits, nothing that could name another file."""
    if len(sha256) != 64 or not _HEX.issuperset(sha256):
        raise SessionError(f"invalid blob name {sha256[:80]!r}", code="invalid_blob")
    return sha256


def blob_dir(session_file: Path) -> Path:
    """The directory beside `<id>.jsonl` that holds the session's blobs."""
    return session_file.with_name(session_file.name[: -len(".jsonl")] + ".blobs")


def output_dir(session_file: Path) -> Path:
    """The directory beside `<id>.jsonl` where the full output of the session's commands is saved (kgent.tools.process:
    at most its first and last 2 MiB per call), so that it outlives the run; deleted with the session."""
    return session_file.with_name(session_file.name[: -len(".jsonl")] + ".outputs")


def write_blob(directory: Path, data: bytes) -> str:
    """Store `data` under its sha256 unless it is there already (durably: temp file, fsync, rename); its hash."""
    sha = hashlib.sha256(data).hexdigest()
    path = directory / sha
    if path.is_file() and path.stat().st_size == len(data):
        return sha
    directory.mkdir(mode=0o700, exist_ok=True)
    tmp = directory / f".{sha}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
    return sha


def read_blob(directory: Path, sha256: str, session_id: str) -> bytes:
    """The blob's bytes; SessionError `blob_missing` if it is gone or its bytes no longer match its hash."""
    try:
        data = _read_regular(directory / check_sha256(sha256))
    except OSError:
        data = None
    if data is None or hashlib.sha256(data).hexdigest() != sha256:
        raise SessionError(
            f"session {session_id} refers to an image ({sha256[:12]}…) whose file is missing or damaged "
            f"in {directory.name}/",
            code="blob_missing",
        )
    return data


def _read_regular(path: Path) -> bytes | None:
    """The bytes of a regular file that is no symlink, at most MAX_BLOB (the state dir is Kgent's own; the session
    layer sits beside the files gate, so the blob store keeps the gate's rules for its one kind of file)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BLOB:
            return None
        return f.read(MAX_BLOB + 1)


def delete_blobs(session_file: Path) -> None:
    """Delete the session's blobs and its saved command outputs."""
    shutil.rmtree(blob_dir(session_file), ignore_errors=True)
    shutil.rmtree(output_dir(session_file), ignore_errors=True)
