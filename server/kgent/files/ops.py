# Concept: file operations — the one I/O seam tools use, so an editor can later serve unsaved buffers.
"""`FileOps`: the async file-system surface tools read and write through; `LocalFileOps` is the disk."""

from __future__ import annotations

import asyncio
import errno
import os
import stat as stat_mod
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

_SMALL_FILE = 256 * 1024  # below this a read is done inline: a thread hop costs more than the read
_UMASK = os.umask(0)
os.umask(_UMASK)


@dataclass(frozen=True, slots=True)
class FileStat:
    """The few stat facts tools need."""

    size: int
    is_dir: bool
    is_file: bool
    mtime: float


@dataclass(frozen=True, slots=True)
class DirEntry:
    """One directory entry; `is_dir` follows symlinks."""

    name: str
    is_dir: bool


@runtime_checkable
class FileOps(Protocol):
    """Async file access. Missing paths raise FileNotFoundError; other failures (a directory, a pipe or device to
    read) raise OSError."""

    async def read_bytes(self, path: Path) -> bytes:
        """The file's bytes (an editor may serve an unsaved buffer)."""
        ...

    async def write_bytes_atomic(self, path: Path, data: bytes) -> None:
        """Replace the file's contents all at once, creating parent directories."""
        ...

    async def exists(self, path: Path) -> bool:
        """Whether the path exists."""
        ...

    async def is_dir(self, path: Path) -> bool:
        """Whether the path is a directory."""
        ...

    async def stat(self, path: Path) -> FileStat:
        """Size, kind and mtime."""
        ...

    async def size(self, path: Path) -> int:
        """Size in bytes."""
        ...

    async def list_dir(self, path: Path) -> list[DirEntry]:
        """A directory's entries, unsorted."""
        ...

    async def remove(self, path: Path) -> None:
        """Delete a file, symlink or empty directory."""
        ...


def _read(path: Path) -> bytes:
    # O_NONBLOCK: opening a FIFO must not wait for a writer (inline, it would freeze the event loop); only regular
    # files are read at all — a pipe or a device has no contents to show.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if stat_mod.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat_mod.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return f.read()


# The suffix of the file an atomic write fills before it renames it over its target (`.NAME.RANDOM.kgent-tmp`, beside
# it): another run's change tracking must not take one that exists for an instant for a change of its own.
TEMP_SUFFIX = ".kgent-tmp"


def _write_atomic(path: Path, data: bytes) -> None:
    target = Path(os.path.realpath(path))  # write through symlinks instead of replacing them
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat_mod.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_UMASK
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    # No fsync of the directory: the rename is atomic, so after a crash the file holds its old or its new bytes,
    # never a mix; editors don't make renames durable either, and it would cost a disk flush per write.


def _list(path: Path) -> list[DirEntry]:
    out: list[DirEntry] = []
    with os.scandir(path) as it:
        for e in it:
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            out.append(DirEntry(e.name, is_dir))
    return out


def _stat(path: Path) -> FileStat:
    st = os.stat(path)
    return FileStat(st.st_size, stat_mod.S_ISDIR(st.st_mode), stat_mod.S_ISREG(st.st_mode), st.st_mtime)


def _exists(path: Path) -> bool:
    return os.path.exists(path)


def _isdir(path: Path) -> bool:
    return os.path.isdir(path)


def _remove(path: Path) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        os.rmdir(path)
    else:
        os.unlink(path)


class LocalFileOps:
    """FileOps on the local disk; blocking calls run in a thread unless they are tiny."""

    async def read_bytes(self, path: Path) -> bytes:
        """The file's bytes (small files read inline)."""
        if os.stat(path).st_size <= _SMALL_FILE:
            return _read(path)
        return await asyncio.to_thread(_read, path)

    async def write_bytes_atomic(self, path: Path, data: bytes) -> None:
        """Write via a temp file in the same directory, fsync, os.replace; creates parents, keeps the mode."""
        await asyncio.to_thread(_write_atomic, path, data)

    async def exists(self, path: Path) -> bool:
        """Whether the path exists (following symlinks)."""
        return _exists(path)  # one stat: cheaper inline than a thread hop

    async def is_dir(self, path: Path) -> bool:
        """Whether the path is a directory (following symlinks)."""
        return _isdir(path)

    async def stat(self, path: Path) -> FileStat:
        """Size, kind and mtime."""
        return _stat(path)

    async def size(self, path: Path) -> int:
        """Size in bytes."""
        return os.stat(path).st_size

    async def list_dir(self, path: Path) -> list[DirEntry]:
        """Entries of a directory, unsorted."""
        return await asyncio.to_thread(_list, path)

    async def remove(self, path: Path) -> None:
        """Delete a file, symlink or empty directory."""
        await asyncio.to_thread(_remove, path)


@runtime_checkable
class HostBuffers(Protocol):
    """What FileOps served by an editor adds (kgent.service.hostfiles.HostFileOps): the loop saves the buffers a run
    wrote before a shell command runs, and shows the notes of fallbacks (a host that timed out, a bad answer)."""

    async def save_buffers(self) -> list[str]:
        """Ask the host to save the buffers this run wrote; the paths still unsaved afterwards."""
        ...

    def take_notes(self) -> list[str]:
        """Notes since the last call (each a sentence for the model and the person), then forget them."""
        ...
