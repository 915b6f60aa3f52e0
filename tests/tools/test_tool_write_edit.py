"""write and edit: atomic writes, previews, exact/fuzzy matching, BOM and CRLF kept, Pi's error texts."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kgent.changes.tracker import ChangeTracker
from kgent.tools.base import PreviewError, ToolContext
from kgent.tools.edit import EditTool
from kgent.tools.write import WriteTool

write, edit = WriteTool(), EditTool()


async def test_write_creates_parents_and_reports_bytes(ws: Path, ctx: ToolContext) -> None:
    out = await write.run({"path": "a/b/c.txt", "content": "héllo\n"}, ctx)
    assert not out.is_error
    assert out.content == "Successfully wrote 7 bytes to a/b/c.txt"
    assert (ws / "a/b/c.txt").read_text() == "héllo\n"
    assert [p.name for p in (ws / "a/b").iterdir()] == ["c.txt"]  # no temp file left behind


async def test_write_overwrites_keeping_mode_and_symlink(ws: Path, ctx: ToolContext) -> None:
    script = ws / "run.sh"
    script.write_text("old")
    script.chmod(0o755)
    (ws / "alias.sh").symlink_to(script)
    await write.run({"path": "alias.sh", "content": "new"}, ctx)
    assert (ws / "alias.sh").is_symlink()
    assert script.read_text() == "new"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    fresh = ws / "fresh.txt"
    await write.run({"path": "fresh.txt", "content": ""}, ctx)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask


async def test_write_preview_is_a_unified_diff(ws: Path, ctx: ToolContext) -> None:
    (ws / "f.txt").write_text("a\nb\n")
    p = await write.preview({"path": "f.txt", "content": "a\nc\n"}, ctx)
    assert p is not None and p.path == "f.txt" and p.old_text == "a\nb\n"
    assert p.diff.startswith("--- a/f.txt\n+++ b/f.txt\n@@")
    assert "-b\n+c\n" in p.diff
    new = await write.preview({"path": "n.txt", "content": "x"}, ctx)
    assert new is not None and new.old_text is None
    assert new.diff.startswith("--- /dev/null\n+++ b/n.txt\n")
    assert "\\ No newline at end of file" in new.diff
    assert (ws / "f.txt").read_text() == "a\nb\n" and not (ws / "n.txt").exists()


async def test_write_records_original_in_tracker(ws: Path, make_ctx) -> None:
    (ws / "f.txt").write_text("before\n")
    tracker = ChangeTracker(ws)
    ctx = make_ctx(changes=tracker)
    await write.run({"path": "f.txt", "content": "after\n"}, ctx)
    await write.run({"path": "f.txt", "content": "after again\n"}, ctx)
    paths, patch = await tracker.finish()
    assert paths == ("f.txt",)
    assert "-before\n+after again\n" in patch


async def test_edit_exact_replacement_with_diff_details(ws: Path, ctx: ToolContext) -> None:
    (ws / "app.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    out = await edit.run({"path": "app.py", "oldText": "return 2", "newText": "return 3"}, ctx)
    assert not out.is_error and out.content == "Successfully replaced text in app.py."
    assert (ws / "app.py").read_text().endswith("return 3\n")
    assert out.details["firstChangedLine"] == 6
    assert "-    return 2\n+    return 3\n" in out.details["diff"]
    assert out.details["diff"].startswith("--- a/app.py\n+++ b/app.py\n")


async def test_edit_fuzzy_match_leaves_the_rest_of_the_file_alone(ws: Path, ctx: ToolContext) -> None:
    original = "title = \u201cHello\u201d   \nkeep \u2014 this\u00a0one  \nlast\n"
    (ws / "q.py").write_text(original)
    out = await edit.run({"path": "q.py", "oldText": 'title = "Hello"\n', "newText": 'title = "Bye"\n'}, ctx)
    assert not out.is_error, out.content
    assert (ws / "q.py").read_text() == 'title = "Bye"\n' + "keep \u2014 this\u00a0one  \nlast\n"


async def test_edit_preserves_crlf_and_bom(ws: Path, ctx: ToolContext) -> None:
    (ws / "w.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    out = await edit.run({"path": "w.txt", "oldText": "two\nthree", "newText": "2\n3"}, ctx)
    assert not out.is_error, out.content
    assert (ws / "w.txt").read_bytes() == b"\xef\xbb\xbfone\r\n2\r\n3\r\n"


async def test_edit_errors_use_pi_texts(ws: Path, ctx: ToolContext) -> None:
    (ws / "dup.txt").write_text("x = 1\ny = 2\nx = 1\n")
    many = await edit.run({"path": "dup.txt", "oldText": "x = 1", "newText": "x = 9"}, ctx)
    assert many.is_error
    assert many.content == (
        "Found 2 occurrences of the text in dup.txt. The text must be unique. "
        "Please provide more context to make it unique."
    )
    none = await edit.run({"path": "dup.txt", "oldText": "z = 3", "newText": "z"}, ctx)
    assert none.content == (
        "Could not find the exact text in dup.txt. The old text must match exactly including all whitespace "
        "and newlines."
    )
    same = await edit.run({"path": "dup.txt", "oldText": "y = 2", "newText": "y = 2"}, ctx)
    assert same.is_error and same.content.startswith("No changes made to dup.txt.")
    missing = await edit.run({"path": "gone.txt", "oldText": "a", "newText": "b"}, ctx)
    assert missing.is_error and missing.content == "File not found: gone.txt"
    assert (ws / "dup.txt").read_text() == "x = 1\ny = 2\nx = 1\n"


async def test_edit_preview_does_not_write(ws: Path, ctx: ToolContext) -> None:
    (ws / "p.txt").write_text("alpha\nbeta\n")
    p = await edit.preview({"path": "p.txt", "oldText": "beta", "newText": "gamma"}, ctx)
    assert p is not None and p.new_text == "alpha\ngamma\n" and "+gamma" in p.diff
    assert (ws / "p.txt").read_text() == "alpha\nbeta\n"
    with pytest.raises(PreviewError, match="Could not find the exact text in p.txt"):
        await edit.preview({"path": "p.txt", "oldText": "zzz", "newText": "q"}, ctx)
    assert edit.describe({"path": "p.txt"}, ctx).title == "Edit p.txt"


@pytest.mark.parametrize(
    ("original", "old", "expected"),
    [
        (
            'a = \u201cx\u201d\nb = "x"\n',
            "\u201cx\u201d",
            'a = y\nb = "x"\n',
        ),  # smart quotes as written, once
        ("x = 1  \nx = 1\n", "x = 1  \n", "x = 2\nx = 1\n"),  # the trailing spaces make it unique
    ],
)
async def test_edit_an_exact_unique_match_wins_over_fuzzy_lookalikes(
    ws: Path, ctx: ToolContext, original: str, old: str, expected: str
) -> None:
    (ws / "f.py").write_text(original)
    new = "y" if "\u201c" in old else "x = 2\n"
    out = await edit.run({"path": "f.py", "oldText": old, "newText": new}, ctx)
    assert not out.is_error, out.content
    assert (ws / "f.py").read_text() == expected


async def test_write_reports_its_diff(ws: Path, ctx: ToolContext) -> None:
    (ws / "x.txt").write_text("one\n")
    out = await write.run({"path": "x.txt", "content": "two\n"}, ctx)
    assert "-one\n+two\n" in out.details["diff"] and out.details["diff"].startswith("--- a/x.txt")
    new = await write.run({"path": "new.txt", "content": "fresh\n"}, ctx)
    assert (
        new.details["diff"].startswith("--- /dev/null\n+++ b/new.txt") and "+fresh\n" in new.details["diff"]
    )
