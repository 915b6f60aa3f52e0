"""The bash tool: exit codes, merged output, tail truncation with a full-output file, timeout and cancel kill
the whole process group, credential-looking env vars stripped, progress streamed."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from kgent.tools.base import ToolContext
from kgent.tools.bash import BashTool

bash = BashTool()


def _file_lines(path: str | Path) -> list[str]:
    return Path(path).read_text().splitlines()


def _gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


async def _dies(pgid: int, seconds: float = 30.0) -> bool:
    """The group is killed at once, but init reaps an orphaned child when it gets to it (a zombie still exists)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _gone(pgid):
            return True
        await asyncio.sleep(0.02)
    return _gone(pgid)


async def test_runs_in_workspace_with_merged_output(ws: Path, ctx: ToolContext) -> None:
    out = await bash.run({"command": "pwd; echo out; echo err >&2"}, ctx)
    assert not out.is_error
    assert out.content == f"{ws}\nout\nerr\n\nExit code: 0"
    assert out.details["exitCode"] == 0
    empty = await bash.run({"command": "true"}, ctx)
    assert empty.content == "(no output)\n\nExit code: 0"


async def test_nonzero_exit_is_an_error(ctx: ToolContext) -> None:
    out = await bash.run({"command": "echo failing; exit 3"}, ctx)
    assert out.is_error
    assert out.content == "failing\n\nCommand exited with code 3"
    assert out.details["exitCode"] == 3


async def test_tail_truncation_by_lines_saves_full_output(ctx: ToolContext, tmp_path: Path) -> None:
    out = await bash.run({"command": "seq 1 2500"}, ctx)
    path = Path(out.details["fullOutputPath"])
    assert path.parent == tmp_path / "out" and path.name.startswith("kgent-bash-") and path.suffix == ".log"
    assert f"\n\n[Showing lines 501-2500 of 2500. Full output: {path}]" in out.content
    assert out.content.startswith("501\n")
    assert _file_lines(path) == [str(i) for i in range(1, 2501)]


async def test_tail_truncation_by_bytes_and_partial_line(ctx: ToolContext) -> None:
    out = await bash.run({"command": "for i in $(seq 1 3000); do printf '%099d\\n' $i; done"}, ctx)
    path = out.details["fullOutputPath"]
    assert f"[Showing lines 2489-3000 of 3000 (50.0KB limit). Full output: {path}]" in out.content
    assert len(_file_lines(path)) == 3000 and _file_lines(path)[-1] == f"{3000:099d}"
    wide = await bash.run({"command": "head -c 80000 /dev/zero | tr '\\0' x"}, ctx)
    assert "[Showing last 50.0KB of line 1 (line is 78.1KB). Full output:" in wide.content
    small = await bash.run({"command": "seq 1 5"}, ctx)
    assert "fullOutputPath" not in small.details


async def test_timeout_kills_the_process_group(ws: Path, ctx: ToolContext) -> None:
    started = time.monotonic()
    # The timeout leaves the shell time to write its pid on a loaded machine; the sleeps outlast any wait here.
    out = await bash.run({"command": "echo $$ > pgid; sleep 100 & sleep 100; wait", "timeout": 1.5}, ctx)
    assert time.monotonic() - started < 30
    assert out.is_error and out.content.endswith("Command timed out after 1.5 seconds")
    assert out.details["timedOut"] is True
    assert await _dies(int((ws / "pgid").read_text()))


async def test_default_timeout_comes_from_context(make_ctx) -> None:
    out = await bash.run({"command": "sleep 100"}, make_ctx(bash_timeout=0.3))
    assert out.is_error and "timed out after 0.3 seconds" in out.content


def _live_in(directory: Path) -> list[int]:
    """Live (non-zombie) processes whose working directory is `directory`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd") == str(directory):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _text(path: Path) -> str:
    return path.read_text().strip() if path.exists() else ""


async def _wait_for_text(path: Path, seconds: float = 30.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text := _text(path):
            return text
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} was not written")


async def test_cancel_kills_the_process_group_and_reraises(ws: Path, ctx: ToolContext) -> None:
    task = asyncio.create_task(bash.run({"command": "echo $$ > pgid; sleep 100 & sleep 100; wait"}, ctx))
    try:
        pgid = int(await _wait_for_text(ws / "pgid"))
        assert not _gone(pgid)
    finally:
        task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _dies(pgid)


async def test_cancel_at_any_point_of_the_spawn_leaves_nothing_running(ws: Path, make_ctx) -> None:
    loop = asyncio.get_running_loop()
    for k in range(6):
        directory = ws / f"k{k}"
        directory.mkdir()
        task = asyncio.create_task(bash.run({"command": "sleep 100 & sleep 100; wait"}, make_ctx(workspace=directory)))
        for _ in range(k):
            await asyncio.sleep(0)
        loop.call_soon(time.sleep, 0.15)  # stall the loop: the shell forks its children meanwhile
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 30)  # a TimeoutError here means the cancel waited on the children
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if not _live_in(directory):
                break
            await asyncio.sleep(0.02)
        assert _live_in(directory) == [], f"cancelled after {k} loop turns"


async def test_background_process_holding_the_pipe_does_not_hang(ctx: ToolContext) -> None:
    started = time.monotonic()
    out = await bash.run({"command": "sleep 100 & echo started"}, ctx)
    assert time.monotonic() - started < 30  # not the 100 s of the background sleep
    assert out.content.startswith("started") and not out.is_error


async def test_credentials_are_stripped_from_the_environment(ctx: ToolContext, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-1")
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("DB_PASSWORD", "p")
    monkeypatch.setenv("MY_SECRET_THING", "s")
    monkeypatch.setenv("KGENT_HARMLESS", "kept")
    out = await bash.run({"command": "env | sort"}, ctx)
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "MY_SECRET_THING"):
        assert name not in out.content
    assert "KGENT_HARMLESS=kept" in out.content and "PATH=" in out.content


async def test_progress_is_streamed(make_ctx) -> None:
    updates: list[str] = []
    out = await bash.run({"command": "echo one; sleep 0.3; echo two"}, make_ctx(on_update=updates.append))
    assert not out.is_error
    assert updates and "one" in updates[0]


def test_describe(ctx: ToolContext) -> None:
    d = bash.describe({"command": "pytest -q"}, ctx)
    assert (d.title, d.command) == ("Run `pytest -q`", "pytest -q")
    assert bash.kind == "execute" and bash.read_only is False
