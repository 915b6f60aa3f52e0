# Concept: spill files — where a shell command's full output goes when it is too long to show: private, capped, and
# kept only as long as the run that made it.
"""Spill files live in `<tmp>/kgent-<uid>/<run id>/` (directories 0700, files 0600). Each keeps the first
`HEAD_BYTES` and the last `TAIL_BYTES` of the output and says how much was dropped between them. Retention: a run's
directory is deleted when the run ends (settled, cancelled or failed); directories left by a process that died are
swept after `STALE_SECONDS` by the next kernel that starts."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

HEAD_BYTES = 2 * 1024 * 1024
TAIL_BYTES = 2 * 1024 * 1024
STALE_SECONDS = 3 * 24 * 3600


def root() -> Path:
    """The per-user spill root (0700, owned by us); a squatted or symlinked one is never used."""
    base = Path(tempfile.gettempdir()) / f"kgent-{os.getuid()}"
    try:
        base.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(base)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
            if stat.S_IMODE(st.st_mode) != 0o700:
                os.chmod(base, 0o700)
            return base
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="kgent-spill-"))


def run_dir(run_id: str) -> Path:
    """Where the spill files of run `run_id` go (created on first use by `private_dir`)."""
    return root() / run_id


def private_dir(path: Path) -> Path:
    """Create `path` (0700) if needed and return it."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def open_private(directory: Path, name: str) -> int:
    """A new file in `directory`, readable by us alone (0600), opened for writing."""
    private_dir(directory)
    return os.open(directory / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)


def release(run_id: str) -> None:
    """The run ended: delete its spill files."""
    shutil.rmtree(run_dir(run_id), ignore_errors=True)


def sweep(now: float | None = None) -> None:
    """Delete run directories untouched for STALE_SECONDS (left by a process that was killed)."""
    now = time.time() if now is None else now
    with contextlib.suppress(OSError), os.scandir(root()) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False) and now - entry.stat().st_mtime > STALE_SECONDS:
                    shutil.rmtree(entry.path, ignore_errors=True)
