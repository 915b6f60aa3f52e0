"""HostFileOps: the tools' FileOps through an editor that serves its open buffers — the one core both fronts use
(the daemon's `agent/readTextFile` / `agent/writeTextFile`, ACP's `fs/read_text_file` / `fs/write_text_file`).

Text goes through the host; everything else (stat, listing, removal, binary files) stays on the local disk. A host
that does not answer within `timeout`, or answers badly, costs at most that once: the file then comes from (or goes
to) the disk, a note says so (the loop appends it to the tool result), and the host is not asked again for the rest
of the run. Never a hang, never a lost edit.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from kgent.files.ops import DirEntry, FileOps, FileStat, LocalFileOps

log = logging.getLogger("kgent.service")

DEFAULT_TIMEOUT = 10.0  # seconds a host may take to answer one file request


class HostFileError(Exception):
    """The host answered a file request with an error or with something that is not an answer."""


class TextFileHost(Protocol):
    """An editor's side of host-owned files (one session). Each method may raise HostFileError."""

    writes_save: (
        bool  # a write the host takes is saved at once (ACP's fs/write_text_file), not left in a buffer
    )

    async def read_text(self, path: Path) -> str | None:
        """The buffer's text, or None when the host does not have the file open (then the disk is read)."""
        ...

    async def write_text(self, path: Path, content: str) -> bool:
        """Put `content` into the buffer; False when the host does not have the file open (then the disk is written)."""
        ...

    async def save(self, paths: Sequence[Path]) -> list[Path]:
        """Save these buffers; the ones it saved."""
        ...


class HostFileOps:
    """FileOps for one run: text through `host` (as far as it offered: `read`, `write`, `save`), the rest local.
    `unsaved_writes`: a write the host takes stays unsaved in its buffer until saved (False: the host saves it)."""

    def __init__(
        self,
        host: TextFileHost,
        *,
        read: bool,
        write: bool,
        save: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        unsaved_writes: bool = True,
        local: FileOps | None = None,
    ) -> None:
        self.host = host
        self.read, self.write, self.save = read, write, save
        self.timeout = timeout
        self.unsaved_writes = unsaved_writes
        self.local: FileOps = local or LocalFileOps()
        self.written: dict[Path, None] = {}  # buffers the host took a write for (ordered, no duplicates)
        self._notes: list[str] = []

    # -- the HostBuffers surface (kgent.files.ops) -----------------------------------------------------------------
    def take_notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes

    async def save_buffers(self) -> list[str]:
        """Ask the host to save the buffers this run wrote; the paths still unsaved (all of them if it cannot)."""
        if not self.written:
            return []
        paths = list(self.written)
        if not self.save:
            return [str(p) for p in paths]
        try:
            saved = set(await asyncio.wait_for(self.host.save(paths), self.timeout))
        except TimeoutError:
            self.save = False
            self._note(f"the editor did not answer agent/saveFiles within {self.timeout:g} s")
            return [str(p) for p in paths]
        except HostFileError as exc:
            self._note(f"the editor could not save its buffers ({exc})")
            return [str(p) for p in paths]
        for p in saved:
            self.written.pop(p, None)
        return [str(p) for p in paths if p not in saved]

    def _note(self, text: str) -> None:
        log.info("host files: %s", text)
        self._notes.append(text)

    # -- FileOps ----------------------------------------------------------------------------------------------------
    async def read_bytes(self, path: Path) -> bytes:
        """The host's text of the file (its buffer if open); the disk's bytes for a binary file, a file the host
        does not have open, or when the host fails."""
        data = await self.local.read_bytes(path)  # missing → FileNotFoundError, as the tools expect
        if not self.read:
            return data
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:  # binary: a text API cannot carry it
            return data
        try:
            text = await asyncio.wait_for(self.host.read_text(path), self.timeout)
        except TimeoutError:
            self.read = False
            self._note(
                f"the editor did not answer agent/readTextFile for {path} within {self.timeout:g} s; "
                "files are read from disk for the rest of this run"
            )
            return data
        except HostFileError as exc:
            self._note(f"the editor could not read {path} ({exc}); read it from disk")
            return data
        return data if text is None else text.encode("utf-8", "surrogatepass")

    async def write_bytes_atomic(self, path: Path, data: bytes) -> None:
        """Text goes to the host's buffer when it has the file open; otherwise (or when the host fails) the disk."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if self.write and text is not None:
            try:
                if await asyncio.wait_for(self.host.write_text(path, text), self.timeout):
                    if self.unsaved_writes:
                        self.written[path] = None
                    return
            except TimeoutError:
                self.write = False
                self._note(
                    f"the editor did not answer agent/writeTextFile for {path} within {self.timeout:g} s; "
                    "the change was written to disk (and later ones will be)"
                )
            except HostFileError as exc:
                self._note(f"the editor could not take the change to {path} ({exc}); it was written to disk")
        await self.local.write_bytes_atomic(path, data)
        self.written.pop(path, None)

    async def exists(self, path: Path) -> bool:
        return await self.local.exists(path)

    async def is_dir(self, path: Path) -> bool:
        return await self.local.is_dir(path)

    async def stat(self, path: Path) -> FileStat:
        return await self.local.stat(path)

    async def size(self, path: Path) -> int:
        return await self.local.size(path)

    async def list_dir(self, path: Path) -> list[DirEntry]:
        return await self.local.list_dir(path)

    async def remove(self, path: Path) -> None:
        await self.local.remove(path)
