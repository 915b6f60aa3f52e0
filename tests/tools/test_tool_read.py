"""The read tool: windows, Pi's continuation notices, binary refusal, errors."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from kgent.tools.base import ToolContext
from kgent.tools.read import ReadTool

read = ReadTool()


async def test_reads_whole_small_file_without_notice(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.txt").write_bytes("\ufeffone\r\ntwo\r\n".encode())
    out = await read.run({"path": "a.txt"}, ctx)
    assert not out.is_error
    assert out.content == "one\ntwo\n"  # BOM dropped, CRLF shown as LF


async def test_offset_and_limit_with_more_lines_notice(ws: Path, ctx: ToolContext) -> None:
    (ws / "n.txt").write_text("\n".join(f"line{i}" for i in range(1, 11)))
    out = await read.run({"path": "n.txt", "offset": 3, "limit": 2}, ctx)
    assert out.content == "line3\nline4\n\n[6 more lines in file. Use offset=5 to continue.]"
    tail = await read.run({"path": "n.txt", "offset": 9}, ctx)
    assert tail.content == "line9\nline10"


async def test_head_truncation_by_lines(ws: Path, ctx: ToolContext) -> None:
    (ws / "big.txt").write_text("\n".join(str(i) for i in range(1, 2501)))
    out = await read.run({"path": "big.txt"}, ctx)
    body, notice = out.content.rsplit("\n\n", 1)
    assert body.splitlines()[-1] == "2000"
    assert notice == "[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"
    assert out.details["truncation"]["truncatedBy"] == "lines"
    more = await read.run({"path": "big.txt", "offset": 2001}, ctx)
    assert more.content.startswith("2001\n") and more.content.endswith("2500")


async def test_head_truncation_by_bytes(ws: Path, ctx: ToolContext) -> None:
    (ws / "wide.txt").write_text("\n".join("x" * 99 for _ in range(1000)))  # 100 KB
    out = await read.run({"path": "wide.txt"}, ctx)
    assert out.content.endswith("[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]")


async def test_first_line_over_limit(ws: Path, ctx: ToolContext) -> None:
    (ws / "min.js").write_text("y" * 60_000 + "\nok")
    out = await read.run({"path": "min.js"}, ctx)
    assert (
        out.content
        == "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' min.js | head -c 51200]"
    )


async def test_offset_past_end_is_an_error(ws: Path, ctx: ToolContext) -> None:
    (ws / "s.txt").write_text("a\nb")
    out = await read.run({"path": "s.txt", "offset": 5}, ctx)
    assert out.is_error and out.content == "Offset 5 is beyond end of file (2 lines total)"


async def test_binary_missing_and_directory_refused(ws: Path, ctx: ToolContext) -> None:
    (ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (ws / "d").mkdir()
    binary = await read.run({"path": "img.png"}, ctx)
    assert binary.is_error and "binary" in binary.content
    missing = await read.run({"path": "nope.txt"}, ctx)
    assert missing.is_error and missing.content == "File not found: nope.txt"
    directory = await read.run({"path": "d"}, ctx)
    assert directory.is_error and "directory" in directory.content
    bad = await read.run({"path": "s.txt", "offset": 0}, ctx)
    assert bad.is_error


def test_describe(ctx: ToolContext) -> None:
    d = read.describe({"path": "src/app.py"}, ctx)
    assert (d.title, d.path) == ("Read src/app.py", "src/app.py")


async def test_a_named_pipe_is_refused_at_once_by_every_file_tool(ws: Path, make_ctx) -> None:
    # Opening a FIFO for reading waits for a writer; done inline it would freeze the whole event loop (every run).
    from kgent.changes.tracker import ChangeTracker
    from kgent.tools.edit import EditTool
    from kgent.tools.write import WriteTool

    os.mkfifo(ws / "pipe")
    ctx = make_ctx(changes=ChangeTracker(ws))
    calls = [
        (ReadTool(), {"path": "pipe"}),
        (EditTool(), {"path": "pipe", "oldText": "a", "newText": "b"}),
        (WriteTool(), {"path": "pipe", "content": "x"}),
    ]
    for tool, args in calls:
        running = asyncio.ensure_future(asyncio.to_thread(asyncio.run, tool.run(args, ctx)))  # its own loop
        done, _ = await asyncio.wait({running}, timeout=30)
        if not done:  # release the blocked open() so the test fails instead of hanging
            os.close(os.open(ws / "pipe", os.O_WRONLY | os.O_NONBLOCK))
            await running
            pytest.fail(f"{tool.name} blocked on a named pipe")
        out = running.result()
        assert out.is_error and "not a regular file" in out.content, (tool.name, out.content)
