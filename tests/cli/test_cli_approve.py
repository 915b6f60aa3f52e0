"""`kgent run` on a terminal: an edit's approval can be changed in $EDITOR first, and the user's version is what
lands (approve with changes); the model is told what the user changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli import Terminal


def test_edit_it_first_in_the_editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sample.py").write_text("value = 1\nprint(value)\n")
    editor = tmp_path / "fake-editor"
    # a person who changes the proposed 2 to 42 and saves
    editor.write_text("#!/bin/sh\nsed -i 's/value = 2/value = 42/' \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(editor))
    term = Terminal(
        "run", "--provider", "scripted", "--model", "tool-loop", "set value", cwd=ws, state=tmp_path / "state"
    )
    term.read_until(b"[e]dit it first")
    term.out = b""
    term.type(b"e\n")
    term.read_until(b"allow? [")  # the bash call that follows: no editing a command
    assert b"[e]dit it first" not in term.out
    assert b"the user approved their own version of the change" in term.out
    term.type(b"n\n")
    assert term.exit_code() == 0
    assert (ws / "sample.py").read_text() == "value = 42\nprint(value)\n"


def test_an_editor_that_fails_rejects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sample.py").write_text("value = 1\nprint(value)\n")
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "false")
    term = Terminal(
        "run", "--provider", "scripted", "--model", "tool-loop", "set value", cwd=ws, state=tmp_path / "state"
    )
    term.read_until(b"[e]dit it first")
    term.type(b"e\n")
    term.read_until(b"the editor exited with status 1: rejected")
    term.read_until(b"allow? [")
    term.type(b"n\n")
    assert term.exit_code() == 0
    assert (ws / "sample.py").read_text() == "value = 1\nprint(value)\n"
