"""HostFileOps, the one core of host-owned files: buffers when the host has them, the disk otherwise, and every
failure of the host (an error, a hang) a fallback to the disk with a note — never a hang, never a lost write."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from kgent.files.ops import HostBuffers
from kgent.service.hostfiles import HostFileError, HostFileOps


class Editor:
    """A host with some files open; `fail` makes every request raise, `hang` makes it never answer."""

    def __init__(self, buffers: dict[Path, str]) -> None:
        self.buffers = buffers
        self.fail = False
        self.hang = False
        self.asked: list[str] = []

    async def _check(self, what: str) -> None:
        self.asked.append(what)
        if self.hang:
            await asyncio.Event().wait()
        if self.fail:
            raise HostFileError("boom")

    async def read_text(self, path: Path) -> str | None:
        await self._check("read")
        return self.buffers.get(path)

    async def write_text(self, path: Path, content: str) -> bool:
        await self._check("write")
        if path not in self.buffers:
            return False
        self.buffers[path] = content
        return True

    async def save(self, paths: Sequence[Path]) -> list[Path]:
        await self._check("save")
        for p in paths:
            p.write_text(self.buffers[p])
        return list(paths)


async def test_open_buffers_are_served_and_written_the_rest_is_the_disk(tmp_path: Path) -> None:
    opened, closed = tmp_path / "open.txt", tmp_path / "closed.txt"
    opened.write_text("disk\n")
    closed.write_text("disk\n")
    editor = Editor({opened: "buffer\n"})
    fs = HostFileOps(editor, read=True, write=True, save=True)
    assert isinstance(fs, HostBuffers)
    assert await fs.read_bytes(opened) == b"buffer\n" and await fs.read_bytes(closed) == b"disk\n"
    await fs.write_bytes_atomic(opened, b"agent\n")
    await fs.write_bytes_atomic(closed, b"agent\n")
    assert editor.buffers[opened] == "agent\n" and opened.read_text() == "disk\n"  # in the buffer, unsaved
    assert closed.read_text() == "agent\n"
    assert await fs.save_buffers() == [] and opened.read_text() == "agent\n"  # saved before a shell call
    assert fs.take_notes() == []


async def test_binary_files_never_go_to_the_host(tmp_path: Path) -> None:
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\xff\xfe\x00")
    editor = Editor({})
    fs = HostFileOps(editor, read=True, write=True)
    assert await fs.read_bytes(blob) == b"\xff\xfe\x00"
    await fs.write_bytes_atomic(blob, b"\xff\x00")
    assert blob.read_bytes() == b"\xff\x00" and editor.asked == []


async def test_an_error_answer_falls_back_to_the_disk_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("disk\n")
    editor = Editor({path: "buffer\n"})
    editor.fail = True
    fs = HostFileOps(editor, read=True, write=True, save=True)
    assert await fs.read_bytes(path) == b"disk\n"
    await fs.write_bytes_atomic(path, b"agent\n")
    assert path.read_text() == "agent\n"  # nothing lost
    notes = fs.take_notes()
    assert len(notes) == 2 and "could not read" in notes[0] and "written to disk" in notes[1]
    assert fs.take_notes() == []


async def test_a_host_that_hangs_costs_one_timeout_per_kind_then_is_not_asked(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("disk\n")
    editor = Editor({path: "buffer\n"})
    editor.hang = True
    fs = HostFileOps(editor, read=True, write=True, save=True, timeout=0.05)
    assert await fs.read_bytes(path) == b"disk\n"
    assert await fs.read_bytes(path) == b"disk\n"
    await fs.write_bytes_atomic(path, b"agent\n")
    await fs.write_bytes_atomic(path, b"again\n")
    assert path.read_text() == "again\n"
    assert editor.asked == ["read", "write"]  # one of each, then the disk directly
    assert all("did not answer" in n for n in fs.take_notes())


async def test_unsaved_writes_are_reported_when_the_host_cannot_save(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("disk\n")
    editor = Editor({path: "buffer\n"})
    fs = HostFileOps(editor, read=True, write=True, save=False)
    await fs.write_bytes_atomic(path, b"agent\n")
    assert await fs.save_buffers() == [str(path)]
    editor.fail = True
    fs.save = True
    assert await fs.save_buffers() == [str(path)] and "could not save" in fs.take_notes()[0]
