"""ChangeTracker: git snapshots via a temporary index (bash changes and untracked files caught, the real index
untouched), and the recorded-originals path when the workspace is not a repository or git is absent."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kgent.changes.tracker import ChangeTracker
from kgent.tools.bash import BashTool
from kgent.tools.edit import EditTool
from kgent.tools.write import WriteTool


def git(ws: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=ws,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def git_apply_check_reverse(ws: Path, patch: str) -> None:
    subprocess.run(
        ["git", "apply", "--check", "-R"], cwd=ws, input=patch, text=True, check=True, capture_output=True
    )


@pytest.fixture
def repo(ws: Path) -> Path:
    git(ws, "init", "-q")
    (ws / "app.py").write_text("a = 1\nb = 2\n")
    (ws / "data.txt").write_text("one\n")
    (ws / "gone.txt").write_text("bye\n")
    (ws / ".gitignore").write_text("*.log\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "init")
    (ws / "data.txt").write_text("one\nuncommitted\n")  # dirty before the run: part of the baseline
    return ws


async def test_git_workspace_diff_covers_tools_bash_and_untracked(repo: Path, make_ctx) -> None:
    index_before = (repo / ".git" / "index").read_bytes()
    status_before = git(repo, "status", "--porcelain")
    tracker = ChangeTracker(repo)
    await tracker.start()
    assert tracker.uses_git
    ctx = make_ctx(changes=tracker)
    assert not (
        await EditTool().run({"path": "app.py", "oldText": "b = 2", "newText": "b = 3"}, ctx)
    ).is_error
    await WriteTool().run({"path": "new/module.py", "content": "print('hi')\n"}, ctx)
    await BashTool().run(
        {"command": "echo more >> data.txt && rm gone.txt && echo untracked > extra.txt"}, ctx
    )
    await WriteTool().run({"path": "run.log", "content": "ignored but written by a tool\n"}, ctx)

    paths, patch = await tracker.finish()
    assert paths == ("app.py", "data.txt", "extra.txt", "gone.txt", "new/module.py", "run.log")
    assert "diff --git a/app.py b/app.py" in patch and "-b = 2\n+b = 3\n" in patch
    assert " one\n uncommitted\n+more\n" in patch  # the uncommitted line is context, not a change
    assert "diff --git a/new/module.py b/new/module.py\nnew file mode 100644" in patch
    assert "--- /dev/null\n+++ b/extra.txt" in patch
    assert "deleted file mode 100644" in patch and "+++ /dev/null" in patch
    assert "diff --git a/run.log b/run.log\nnew file mode 100644" in patch
    assert (repo / ".git" / "index").read_bytes() == index_before
    assert git(repo, "status", "--porcelain") != status_before  # the work tree changed...
    assert "new/" not in git(repo, "diff", "--cached", "--name-only")  # ...but nothing was staged

    git_apply_check_reverse(repo, patch)


async def test_workspace_without_git_uses_recorded_originals(ws: Path, make_ctx) -> None:
    (ws / "keep.txt").write_text("x\n")
    (ws / "f.txt").write_text("old\n")
    tracker = ChangeTracker(ws)
    await tracker.start()
    assert not tracker.uses_git
    ctx = make_ctx(changes=tracker)
    await EditTool().run({"path": "f.txt", "oldText": "old", "newText": "new"}, ctx)
    await WriteTool().run({"path": "d/added.txt", "content": "hello"}, ctx)
    await WriteTool().run({"path": "keep.txt", "content": "x\n"}, ctx)  # rewritten identically: no change
    paths, patch = await tracker.finish()
    assert paths == ("d/added.txt", "f.txt")
    assert patch.startswith(
        "diff --git a/d/added.txt b/d/added.txt\nnew file mode 100644\n--- /dev/null\n+++ b/d/added.txt\n"
    )
    assert "+hello\n\\ No newline at end of file\n" in patch
    assert "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-old\n+new\n" in patch


async def test_git_binary_absent(
    repo: Path, make_ctx, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = tmp_path / "nobin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    tracker = ChangeTracker(repo)
    await tracker.start()
    assert not tracker.uses_git
    await WriteTool().run({"path": "app.py", "content": "a = 9\n"}, make_ctx(changes=tracker))
    paths, patch = await tracker.finish()
    assert paths == ("app.py",)
    assert "-a = 1\n-b = 2\n+a = 9\n" in patch


async def test_nothing_changed(repo: Path) -> None:
    tracker = ChangeTracker(repo)
    await tracker.start()
    assert await tracker.finish() == ((), "")


async def test_large_untracked_files_stay_out_of_the_snapshots(repo: Path, make_ctx, monkeypatch) -> None:
    # Hashing them would slow every run's start and end and leave their blobs in .git; a change is named, not shown.
    import kgent.changes.tracker as changes

    monkeypatch.setattr(changes, "MAX_SNAPSHOT_FILE", 1000)
    (repo / "dataset.csv").write_text("x\n" * 1000)  # large from the start
    (repo / "notes.txt").write_text("small\n")  # small at the start, large at the end
    objects_before = git(repo, "count-objects")
    tracker = ChangeTracker(repo)
    await tracker.start()
    await BashTool().run(
        {"command": "echo more >> dataset.csv && seq 1 1000 >> notes.txt && echo b = 3 >> app.py"},
        make_ctx(changes=tracker),
    )
    paths, patch = await tracker.finish()
    assert paths == ("app.py", "notes.txt")  # the large file's change is invisible to git here
    assert "diff --git a/notes.txt b/notes.txt\nBinary files a/notes.txt and b/notes.txt differ\n" in patch
    assert "+b = 3\n" in patch and "dataset.csv" not in patch
    blobs = int(git(repo, "count-objects").split()[0]) - int(objects_before.split()[0])
    assert blobs <= 6  # small blobs and trees only; never the large files (each would be its own object)


async def test_a_large_file_written_by_a_tool_is_named_not_diffed(ws: Path, make_ctx, monkeypatch) -> None:
    import kgent.changes.tracker as changes

    monkeypatch.setattr(changes, "MAX_SNAPSHOT_FILE", 1000)
    tracker = ChangeTracker(ws)
    await tracker.start()
    await WriteTool().run({"path": "big.txt", "content": "line\n" * 1000}, make_ctx(changes=tracker))
    paths, patch = await tracker.finish()
    assert paths == ("big.txt",)
    assert patch == "diff --git a/big.txt b/big.txt\nBinary files a/big.txt and b/big.txt differ\n"


@pytest.mark.parametrize("sub", ["", "pkg"])
async def test_tool_only_changes_end_with_one_git_status(
    repo: Path, make_ctx, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sub: str
) -> None:
    """No snapshot or diff at the end when every change is a file a tool recorded: the originals give the patch."""
    import os
    import shutil

    ws = repo / sub if sub else repo
    if sub:
        ws.mkdir()
        (ws / "app.py").write_text("a = 1\nb = 2\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "pkg")
    log, shim = tmp_path / "git.log", tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("git")} "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    tracker = ChangeTracker(ws)
    await tracker.start()
    assert tracker.uses_git
    log.write_text("")
    ctx = make_ctx(changes=tracker, workspace=ws)
    await EditTool().run({"path": "app.py", "oldText": "b = 2", "newText": "b = 3"}, ctx)
    await WriteTool().run({"path": "new.txt", "content": "n\n"}, ctx)
    paths, patch = await tracker.finish()
    assert paths == ("app.py", "new.txt")
    calls = log.read_text().splitlines()
    assert len(calls) == 1 and " status " in calls[0], calls
    assert "-b = 2\n+b = 3\n" in patch and "+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n" in patch
    git_apply_check_reverse(ws, patch)


async def test_a_write_in_flight_beside_the_run_is_no_change_of_its_own(repo: Path) -> None:
    """Two runs at once in one work tree (the VS Code panel and Run Task): the other run's atomic write exists for an
    instant as `.NAME.RANDOM.kgent-tmp` beside its target. A snapshot taken then must not count it — as a file this
    run created when it is there at the end, or deleted when it was there at the start."""
    (repo / "sub").mkdir()
    tracker = ChangeTracker(repo)
    early = repo / ".data.txt.a1b2c3.kgent-tmp"
    early.write_text("in flight at the start\n")
    await tracker.start()
    early.unlink()  # renamed over its target by the other run: its change is that run's
    (repo / "sub" / ".notes.txt.l_4gj7u3.kgent-tmp").write_text("in flight at the end\n")
    (repo / "app.py").write_text("a = 1\nb = 3\n")  # this run's own change, by a command
    paths, patch = await tracker.finish()
    assert paths == ("app.py",)
    assert "kgent-tmp" not in patch
