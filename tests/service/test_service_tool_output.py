"""kgent.service.outputs on its own: only a saved output in the session's own directory, under the bash tool's
name, a regular file no larger than what is kept, is read back — redacted, as the kernel leaves it on disk
(kgent.kernel.toolexec) — and a call's result is found on the active branch first."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from kgent.core.redact import remember_secret
from kgent.kernel.toolexec import _redact_saved
from kgent.sandbox import spill
from kgent.service.outputs import MAX_SAVED, full_output, saved_output, tool_result
from kgent.session.entries import SessionInfo, SessionTree, new_entry

NAME = "kgent-bash-0123456789abcdef.log"


def test_only_a_saved_output_of_the_sessions_own_directory_is_read(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "s1.outputs", tmp_path / "s2.outputs"
    for d in (mine, theirs):
        d.mkdir()
        (d / NAME).write_text(f"output of {d.name}\n")
    assert saved_output(str(mine / NAME), mine) == f"output of {mine.name}\n"
    assert saved_output(str(theirs / NAME), mine) is None  # another session's
    assert saved_output(f"{mine}/../{theirs.name}/{NAME}", mine) is None  # the same, in disguise
    assert saved_output(NAME, mine) is None  # relative
    (mine / "notes.txt").write_text("not an output\n")
    assert saved_output(str(mine / "notes.txt"), mine) is None  # not a name the bash tool gives
    link = mine / "kgent-bash-fedcba9876543210.log"
    link.symlink_to(theirs / NAME)
    assert saved_output(str(link), mine) is None  # a link is not followed
    big = mine / "kgent-bash-00000000000000aa.log"
    with big.open("wb") as f:
        f.truncate(MAX_SAVED + 1)
    assert saved_output(str(big), mine) is None  # larger than any output the tool keeps
    assert saved_output(None, mine) is None
    # a store without files saves in the run's spill directory, under the spill root only
    run = spill.run_dir(f"run-test-{secrets.token_hex(4)}")
    try:
        spill.private_dir(run)
        (run / NAME).write_text("spilled\n")
        assert saved_output(str(run / NAME), None) == "spilled\n"
        assert saved_output(str(mine / NAME), None) is None
    finally:
        spill.release(run.name)


def test_a_key_the_command_printed_is_masked_on_disk_and_when_read(tmp_path: Path) -> None:
    key = f"opaque-round4a-{secrets.token_hex(8)}"
    remember_secret(key)
    saved = tmp_path / NAME
    saved.write_text(f"line 1\nKEY={key}\nline 3\n")
    os.chmod(saved, 0o600)
    _redact_saved(saved)
    text = saved.read_text()
    assert key not in text and "line 1\n" in text and "line 3\n" in text
    assert saved.stat().st_mode & 0o777 == 0o600
    saved.write_text(f"again {key}\n")  # read back, it is masked as well
    shown = saved_output(str(saved), tmp_path)
    assert shown is not None and key not in shown and shown.startswith("again ")
    _redact_saved(tmp_path / "gone.log")  # a file that is gone is left so


def test_the_result_on_the_active_branch_and_what_is_read_for_it(tmp_path: Path) -> None:
    tree = SessionTree(info=SessionInfo(id="s1", workspace=str(tmp_path), created="2026-01-01T00:00:00Z"))

    def result(parent: str | None, text: str, **details: object) -> str:
        message = {"role": "tool", "toolCallId": "c1", "name": "bash", "content": text, "details": details}
        entry = new_entry("message", parent, message=message)
        tree.add([entry])
        return entry.id

    first = result(None, "first branch")
    result(None, "second branch")
    tree.leaf_id = first
    found = tool_result(tree, "c1")
    assert found is not None and found["content"] == "first branch"
    tree.leaf_id = None  # on no branch: the newest
    found = tool_result(tree, "c1")
    assert found is not None and found["content"] == "second branch"
    assert tool_result(tree, "c2") is None
    (tmp_path / NAME).write_text("all of it\n")
    cut = {"truncation": {"truncated": True}, "fullOutputPath": str(tmp_path / NAME)}
    assert full_output({"content": "tail", "details": cut}, tmp_path) == ("all of it", False)
    dropped = {**cut, "outputDroppedBytes": 5}
    assert full_output({"content": "tail", "details": dropped}, tmp_path) == ("all of it", True)
    (tmp_path / NAME).unlink()  # gone: what the model was shown, marked as not all
    assert full_output({"content": "tail", "details": cut}, tmp_path) == ("tail", True)
    assert full_output({"content": "whole"}, tmp_path) == ("whole", False)
