"""Instruction files on real disk: which directory's file is loaded, CLAUDE.md as the fallback, the size limit, links
out of the workspace, change detection, and the message the model gets (general → specific)."""

from __future__ import annotations

import os
from pathlib import Path

from kgent.context.instructions import MAX_BYTES, InstructionSet, entry_files, latest, render
from kgent.context.projection import project
from kgent.core.messages import InstructionsMessage, UserMessage, message_to_dict
from kgent.session.entries import new_entry


def test_root_and_user_files_load_general_first(tmp_path: Path) -> None:
    ws, user = tmp_path / "ws", tmp_path / "user"
    ws.mkdir()
    user.mkdir()
    (ws / "AGENTS.md").write_text("Use tabs.\n")
    (user / "AGENTS.md").write_text("Answer in English.\n")
    files = InstructionSet(workspace=ws, user_dir=user).start()
    assert [(f.source, f.text) for f in files] == [
        ("user", "Answer in English.\n"),
        ("project", "Use tabs.\n"),
    ]
    text = render(files)
    assert text.index("Answer in English.") < text.index("Use tabs.")
    assert "the later one (nearer to the files it is about) wins" in text


def test_claude_md_only_where_no_agents_md(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("claude rules")
    [only] = InstructionSet(workspace=tmp_path, user_dir=None).start()
    assert only.path.endswith("CLAUDE.md")
    (tmp_path / "AGENTS.md").write_text("agents rules")
    again = InstructionSet(workspace=tmp_path, user_dir=None).start()
    assert [f.text for f in again] == ["agents rules"]


def test_nested_files_between_root_and_the_touched_path(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "c").mkdir()
    (tmp_path / "a" / "AGENTS.md").write_text("a rules")
    (tmp_path / "a" / "b" / "AGENTS.md").write_text("b rules")
    (tmp_path / "c" / "AGENTS.md").write_text("c rules")
    found = InstructionSet(workspace=tmp_path, user_dir=None)
    assert found.start() == []
    files = found.touched(["a/b/x.py"])
    assert [f.text for f in files] == ["a rules", "b rules"]  # shallow → deep
    assert found.touched(["a/b/y.py", str(tmp_path / "a" / "z.py")]) == []  # already known, unchanged
    assert found.touched(["../elsewhere/AGENTS.md", "/etc/passwd"]) == []  # outside the workspace: never


def test_a_changed_file_is_read_again_and_a_deleted_one_dropped(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("old text")
    first = InstructionSet(workspace=tmp_path, user_dir=None)
    [loaded] = first.start()
    (tmp_path / "AGENTS.md").write_text("the new text, longer")
    resumed = InstructionSet(workspace=tmp_path, user_dir=None, known=latest([{"files": [loaded.to_dict()]}]))
    [changed] = resumed.start()
    assert changed.change == "changed" and changed.text == "the new text, longer"
    assert "this text replaces the earlier one" in render([changed])
    (tmp_path / "AGENTS.md").unlink()
    [gone] = resumed.start()
    assert gone.change == "removed"
    assert resumed.known == {}


def test_same_bytes_new_mtime_is_no_change(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text("same")
    found = InstructionSet(workspace=tmp_path, user_dir=None)
    found.start()
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert found.start() == []


def test_a_big_file_is_cut_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_bytes(b"x" * (MAX_BYTES + 100))
    [f] = InstructionSet(workspace=tmp_path, user_dir=None).start()
    assert f.truncated and len(f.text) == MAX_BYTES and f.size == MAX_BYTES + 100
    assert f"only its first {MAX_BYTES} bytes are shown" in render([f])


def test_a_link_out_of_the_workspace_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=abc")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").symlink_to(secret)
    assert InstructionSet(workspace=ws, user_dir=None).start() == []


def test_projection_places_instructions_where_they_were_recorded(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("root rules")
    [root] = InstructionSet(workspace=tmp_path, user_dir=None).start()
    e1 = new_entry("instructions", None, files=[root.to_dict()])
    e2 = new_entry("message", e1.id, message=message_to_dict(UserMessage(text="hi")))
    messages = project([e1, e2])
    assert isinstance(messages[0], InstructionsMessage) and "root rules" in messages[0].text
    assert messages[1] == UserMessage(text="hi")
    assert entry_files(e1.data) == [root]


def test_a_checkpoint_keeps_the_instructions_it_covers(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("root rules")
    [root] = InstructionSet(workspace=tmp_path, user_dir=None).start()
    e1 = new_entry("instructions", None, files=[root.to_dict()])
    e2 = new_entry("message", e1.id, message=message_to_dict(UserMessage(text="old")))
    e3 = new_entry("message", e2.id, message=message_to_dict(UserMessage(text="kept")))
    c = new_entry("compaction", e3.id, summary="## Goal\nx", firstKeptEntryId=e3.id)
    messages = project([e1, e2, e3, c])
    assert [type(m).__name__ for m in messages] == ["SummaryMessage", "InstructionsMessage", "UserMessage"]
    assert "root rules" in messages[1].text  # type: ignore[union-attr]
