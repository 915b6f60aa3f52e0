"""Two runs at once in one git work tree (the VS Code panel plus Run Task, issue 29): each run's changed paths,
patch and review name the files it wrote, not the other run's, although both runs' git snapshots see both writes.
A file only a shell command changed is still the run's own."""

from __future__ import annotations

import subprocess
from pathlib import Path

from kgent.changes.tracker import ChangeTracker
from kgent.files.ops import LocalFileOps
from kgent.kernel.review import RunReview


def _git_work_tree(ws: Path) -> None:
    (ws / "sample.py").write_text("value = 1\n")
    (ws / "notes.txt").write_text("note\n")
    (ws / "other.txt").write_text("other\n")
    env = ["-c", "user.name=Kgent Test", "-c", "user.email=test@kgent.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *env, *args], cwd=ws, check=True, capture_output=True)


async def test_concurrent_runs_in_a_git_work_tree_each_report_only_their_own_writes(tmp_path: Path) -> None:
    _git_work_tree(tmp_path)
    fs = LocalFileOps()
    a = RunReview(ChangeTracker(tmp_path), fs, tmp_path, "run-a")
    b = RunReview(ChangeTracker(tmp_path), fs, tmp_path, "run-b")
    await a.start()
    await b.start()
    await a.record_before(tmp_path / "sample.py", fs)
    (tmp_path / "sample.py").write_text("value = 2\n")
    await b.record_before(tmp_path / "notes.txt", fs)
    (tmp_path / "notes.txt").write_text("second\n")
    (tmp_path / "other.txt").write_text("changed by run a's shell command\n")  # nobody recorded it
    b_paths, b_patch = await b.finish()  # b ends first; a, still running, must not claim b's file either
    a_paths, a_patch = await a.finish()
    assert a_paths == ("other.txt", "sample.py")
    assert "notes.txt" not in a_patch and "sample.py" in a_patch
    assert [f.path for f in a.files] == ["other.txt", "sample.py"]
    assert "notes.txt" in b_paths and "sample.py" not in b_paths
    assert "sample.py" not in b_patch
    assert "sample.py" not in [f.path for f in b.files]


async def test_a_run_after_another_ended_claims_its_own_writes_again(tmp_path: Path) -> None:
    _git_work_tree(tmp_path)
    fs = LocalFileOps()
    first = RunReview(ChangeTracker(tmp_path), fs, tmp_path, "run-1")
    await first.start()
    await first.record_before(tmp_path / "notes.txt", fs)
    (tmp_path / "notes.txt").write_text("first\n")
    assert (await first.finish())[0] == ("notes.txt",)
    later = RunReview(ChangeTracker(tmp_path), fs, tmp_path, "run-2")
    await later.start()
    (tmp_path / "notes.txt").write_text("by a command of the later run\n")  # not recorded: a shell command
    assert (await later.finish())[0] == ("notes.txt",)
