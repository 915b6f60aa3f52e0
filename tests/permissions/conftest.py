"""A workspace under tmp_path with a source file, secrets, and symlinks leading in and out of it."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('hi')\n")
    (ws / ".env").write_text("API_KEY=sk-not-real\n")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (ws / "out").symlink_to(outside, target_is_directory=True)  # a directory link leading out
    (ws / "escape.txt").symlink_to(outside / "secret.txt")  # a file link leading out
    (ws / "alias.py").symlink_to(ws / "src" / "app.py")  # a link that stays inside
    return ws
