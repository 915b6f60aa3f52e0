"""Approve with changes at the tool level: the user's version is written only over the text the approval showed,
keeps the file's BOM and line endings for an edit, and tells the model what the user changed; previews of calls
that would fail raise PreviewError with the tool's own message."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgent.changes.tracker import ChangeTracker
from kgent.tools.base import PreviewError, ToolContext
from kgent.tools.edit import EditTool
from kgent.tools.userversion import write_user_version
from kgent.tools.write import WriteTool

write, edit = WriteTool(), EditTool()


async def test_edit_user_version_written_and_model_told(ws: Path, ctx: ToolContext) -> None:
    (ws / "a.py").write_text("x = 1\ny = 2\n")
    proposal = await edit.preview({"path": "a.py", "oldText": "x = 1", "newText": "x = 10"}, ctx)
    assert proposal is not None
    out = await write_user_version(proposal, "x = 11\ny = 2\n", ctx)
    assert not out.is_error
    assert (ws / "a.py").read_text() == "x = 11\ny = 2\n"
    assert "Keep their changes" in out.content
    assert "-x = 10\n+x = 11\n" in out.content  # from the model's proposal to what was written
    assert "-x = 1\n+x = 11\n" in out.details["diff"]  # the file's change, for the editor
    assert out.details["userEdited"] is True


async def test_edit_user_version_keeps_bom_and_crlf(ws: Path, ctx: ToolContext) -> None:
    (ws / "w.txt").write_bytes("\ufeffone\r\ntwo\r\n".encode())
    proposal = await edit.preview({"path": "w.txt", "oldText": "two", "newText": "TWO"}, ctx)
    assert proposal is not None and proposal.new_text == "one\nTWO\n"
    out = await write_user_version(proposal, "one\nTwo!\nthree\n", ctx)
    assert not out.is_error
    assert (ws / "w.txt").read_bytes() == "\ufeffone\r\nTwo!\r\nthree\r\n".encode()


async def test_conflict_writes_nothing(ws: Path, ctx: ToolContext) -> None:
    (ws / "c.txt").write_text("a\n")
    proposal = await write.preview({"path": "c.txt", "content": "b\n"}, ctx)
    assert proposal is not None
    (ws / "c.txt").write_text("changed meanwhile\n")
    out = await write_user_version(proposal, "mine\n", ctx)
    assert out.is_error and out.content.startswith("conflict: c.txt changed after the approval was shown")
    assert (ws / "c.txt").read_text() == "changed meanwhile\n"
    fresh = await write.preview({"path": "new.txt", "content": "n\n"}, ctx)
    assert fresh is not None and fresh.old_text is None
    (ws / "new.txt").write_text("someone else's\n")
    late = await write_user_version(fresh, "mine\n", ctx)
    assert late.is_error and (ws / "new.txt").read_text() == "someone else's\n"


async def test_user_version_recorded_by_the_tracker(ws: Path, make_ctx) -> None:
    (ws / "f.txt").write_text("before\n")
    tracker = ChangeTracker(ws)
    ctx = make_ctx(changes=tracker)
    proposal = await write.preview({"path": "f.txt", "content": "model\n"}, ctx)
    assert proposal is not None
    out = await write_user_version(proposal, "user\n", ctx)
    assert not out.is_error and (ws / "f.txt").read_text() == "user\n"
    paths, patch = await tracker.finish()
    assert paths == ("f.txt",) and "-before\n+user\n" in patch


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        (
            edit,
            {"path": "f.txt", "oldText": "nope", "newText": "x"},
            "Could not find the exact text in f.txt",
        ),
        (
            edit,
            {"path": "f.txt", "oldText": "dup", "newText": "x"},
            "Found 2 occurrences of the text in f.txt",
        ),
        (edit, {"path": "gone.txt", "oldText": "a", "newText": "b"}, "File not found: gone.txt"),
        (edit, {"path": "d", "oldText": "a", "newText": "b"}, "Path is a directory: d"),
        (write, {"path": "d", "content": "x"}, "Path is a directory: d"),
        (write, {"path": "../out.txt", "content": "x"}, "outside the workspace"),
    ],
)
async def test_preview_of_a_failing_call_raises(
    ws: Path, ctx: ToolContext, tool: EditTool | WriteTool, args: dict[str, str], message: str
) -> None:
    (ws / "f.txt").write_text("dup\ndup\n")
    (ws / "d").mkdir()
    with pytest.raises(PreviewError, match=message):
        await tool.preview(args, ctx)
    # the call itself fails with the same words
    out = await tool.run(args, ctx)
    assert out.is_error and message in out.content
