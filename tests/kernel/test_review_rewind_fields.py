"""What a review entry keeps for a rewind (kgent.service.rewind): each file's beforeSha — the SHA-256 of its text
before the run, from the write tools' view or, for a shell command's change in git, from the tracker's patch — and
the changed files it has no hunks for (`unreviewed`: binary, too large)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from kgent.changes.tracker import ChangeTracker
from kgent.files.ops import LocalFileOps
from kgent.kernel.review import RunReview


def _git_init(ws: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def test_before_hashes_for_tool_and_shell_changes_and_the_unreviewed_files(tmp_path: Path) -> None:
    (tmp_path / "tool.txt").write_text("by a tool\n")
    (tmp_path / "shell.txt").write_text("by a command\n")
    (tmp_path / "image.bin").write_bytes(b"\x00\x01")
    _git_init(tmp_path)
    fs = LocalFileOps()
    review = RunReview(ChangeTracker(tmp_path), fs, tmp_path, "run-1")
    await review.start()
    await review.record_before(tmp_path / "tool.txt", fs)
    (tmp_path / "tool.txt").write_text("by a tool, changed\n")
    await review.record_before(tmp_path / "created.txt", fs)
    (tmp_path / "created.txt").write_text("new\n")
    (tmp_path / "shell.txt").write_text("by a command, changed\n")  # a shell command: only git saw it
    (tmp_path / "image.bin").write_bytes(b"\x00\x02")
    await review.finish()
    data = review.entry_data()
    assert data is not None
    files = {f["path"]: f for f in data["files"]}
    assert files["tool.txt"]["beforeSha"] == _sha("by a tool\n")
    assert files["shell.txt"]["beforeSha"] == _sha("by a command\n")
    assert "beforeSha" not in files["created.txt"]  # it had no text before
    assert data["unreviewed"] == ["image.bin"]


async def test_a_run_that_changed_only_a_binary_file_still_leaves_an_entry(tmp_path: Path) -> None:
    (tmp_path / "image.bin").write_bytes(b"\x00\x01")
    _git_init(tmp_path)
    review = RunReview(ChangeTracker(tmp_path), LocalFileOps(), tmp_path, "run-1")
    await review.start()
    (tmp_path / "image.bin").write_bytes(b"\x00\x02")
    await review.finish()
    assert review.entry_data() == {"runId": "run-1", "files": [], "unreviewed": ["image.bin"]}
