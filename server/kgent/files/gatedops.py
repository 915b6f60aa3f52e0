# Concept: the files gate in front of a FileOps — the tools', review's and rewind's file access (the disk, or an
# editor's buffers) admitted path by path by kgent.files.gate before the FileOps touches it.
"""`GatedFiles`: a FileOps that admits every path it is given (inside, protected, configuration for writes) and
caps reads; Refused is a PermissionError, so a tool's `except OSError` reports the gate's reason."""

from __future__ import annotations

import errno
from pathlib import Path

from kgent.files.audit import gated
from kgent.files.gate import MAX_BYTES, Admitted, Refused, admit, refusal
from kgent.files.ops import DirEntry, FileOps, FileStat

__all__ = ["GatedFiles", "Refused"]


class GatedFiles:
    """A FileOps that admits every path before `inner` touches it: the tools' (`outside_ok` / `protected_ok` as the
    call was approved), and the person's review and rewind (`protected_ok`: they act on files the run changed).
    Refused is a PermissionError, so a tool's `except OSError` reports the gate's reason."""

    def __init__(
        self,
        inner: FileOps,
        root: Path,
        *,
        outside_ok: bool = False,
        protected_ok: bool = False,
        limit: int = MAX_BYTES,
    ) -> None:
        self.inner = inner
        self.root = root
        self.outside_ok = outside_ok
        self.protected_ok = protected_ok
        self.limit = limit

    def _admit(self, path: Path, *, write: bool = False, contents: bool = True) -> Admitted:
        return admit(
            self.root,
            path,
            write=write,
            outside_ok=self.outside_ok,
            protected_ok=self.protected_ok or not contents,
        )

    async def read_bytes(self, path: Path) -> bytes:
        admitted = self._admit(path)
        with gated():
            st = await self.inner.stat(admitted.abs)
            if st.is_dir:
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            if not st.is_file:
                raise refusal("not_regular", admitted.rel, self.root)
            if st.size > self.limit:
                raise refusal("too_large", admitted.rel, self.root, self.limit)
            return await self.inner.read_bytes(admitted.abs)

    async def write_bytes_atomic(self, path: Path, data: bytes) -> None:
        admitted = self._admit(path, write=True)
        with gated():
            await self.inner.write_bytes_atomic(admitted.abs, data)

    async def exists(self, path: Path) -> bool:
        admitted = self._admit(path, contents=False)
        with gated():
            return await self.inner.exists(admitted.abs)

    async def is_dir(self, path: Path) -> bool:
        admitted = self._admit(path, contents=False)
        with gated():
            return await self.inner.is_dir(admitted.abs)

    async def stat(self, path: Path) -> FileStat:
        admitted = self._admit(path, contents=False)
        with gated():
            return await self.inner.stat(admitted.abs)

    async def size(self, path: Path) -> int:
        admitted = self._admit(path, contents=False)
        with gated():
            return await self.inner.size(admitted.abs)

    async def list_dir(self, path: Path) -> list[DirEntry]:
        admitted = self._admit(path)
        with gated():
            return await self.inner.list_dir(admitted.abs)

    async def remove(self, path: Path) -> None:
        admitted = self._admit(path, write=True)
        with gated():
            await self.inner.remove(admitted.abs)
