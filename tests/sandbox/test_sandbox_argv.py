"""The unasked path of the bash tool: the classifier's argvs exec'd by bubblewrap with no shell, pipes and lists wired
by Kgent — with the output, exit codes, timeouts, cancellation, truncation and live updates of `bash -c`, and a
sandbox that never mounts a git directory from outside the workspace for such a call."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
from pathlib import Path

import pytest

from kgent.files.ops import LocalFileOps
from kgent.permissions.commands import read_only
from kgent.sandbox.argv import Plan, Stage
from kgent.sandbox.bwrap import Bubblewrap, Grant, detect
from kgent.tools.base import ToolContext, ToolOutput
from kgent.tools.bash import BashTool

bash = BashTool()


@pytest.fixture(scope="module")
def bwrap() -> Bubblewrap:
    sandbox = detect()
    assert isinstance(sandbox, Bubblewrap), f"these tests need bubblewrap: {sandbox.reason}"
    return sandbox


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    (ws / "b.txt").write_text("four\n")
    (ws / "-n").write_text("a file named -n\n")
    (ws / ".env").write_text("TOKEN=hidden\n")
    return ws


async def _run(
    sandbox: Bubblewrap, ws: Path, command: str, plan: Plan | None, **kw: object
) -> tuple[ToolOutput, list[str]]:
    updates: list[str] = []
    ctx = ToolContext(
        workspace=ws, fs=LocalFileOps(), sandbox=sandbox, grant=Grant(plan=plan), on_update=updates.append
    )
    return await bash.run({"command": command, **kw}, ctx), updates


def _plan(ws: Path, command: str) -> Plan:
    reading = read_only(command, ws)
    assert reading.problem is None and reading.plan is not None, reading.problem
    return reading.plan


@pytest.mark.parametrize(
    "command",
    [
        "cat a.txt",
        "cat a.txt | wc -l",
        "cat a.txt b.txt | sort | head -n 2",
        "cat missing.txt",
        "cat missing.txt | wc -l",
        "cat missing.txt 2>&1 | wc -l",
        "cat missing.txt |& wc -l",
        "cat missing.txt 2>/dev/null",
        "cat missing.txt 2>&1 >/dev/null",
        "cat a.txt missing.txt >/dev/null 2>&1",
        "cat a.txt &>/dev/null",
        "echo to stderr >&2",
        "false && echo yes || echo no",
        "true || echo skipped; echo after",
        "false; true",
        "true; false",
        "false | true",
        "true | false",
        "grep -c o a.txt && grep -c zzz a.txt",
        "grep zzz a.txt || grep -n t a.txt && echo both",
        "cat a.txt\ncat b.txt",
        "ls nomatch*",
        "ls *.txt",
        "wc -l *.txt | tail -n 1",
        "cat .env",
        "head -c 200000 /dev/zero | wc -c",
        "cat a.txt | head -n 1",
    ],
)
async def test_the_argv_path_behaves_as_bash_for_what_it_runs(
    bwrap: Bubblewrap, ws: Path, command: str
) -> None:
    argv, _ = await _run(bwrap, ws, command, _plan(ws, command))
    shell, _ = await _run(bwrap, ws, command, None)
    assert (argv.content, argv.is_error, argv.details["exitCode"]) == (
        shell.content,
        shell.is_error,
        shell.details["exitCode"],
    )


async def test_an_option_named_file_from_a_glob_is_read_as_a_file(bwrap: Bubblewrap, ws: Path) -> None:
    argv, _ = await _run(bwrap, ws, "cat *", _plan(ws, "cat *"))
    assert "a file named -n" in argv.content and "     1\t" not in argv.content
    shell, _ = await _run(bwrap, ws, "cat *", None)  # what bash made of it: `-n` numbered the lines
    assert "     1\tone" in shell.content


async def test_no_shell_runs_the_plan(bwrap: Bubblewrap, ws: Path) -> None:
    # a plan is run as it stands: its words are never read by a shell again
    plan = Plan(steps=(("", (Stage(("echo", "$(id)", "`id`", "*", "~", "a;b")),)),))
    out, _ = await _run(bwrap, ws, "ignored", plan)
    assert out.content.startswith("$(id) `id` * ~ a;b\n")


async def test_truncation_spill_and_live_updates_as_for_bash(bwrap: Bubblewrap, ws: Path) -> None:
    plan = Plan(steps=(("", (Stage(("seq", "1", "300000")),)),))
    out, updates = await _run(bwrap, ws, "seq 1 300000", plan)
    assert out.details["truncation"]["truncated"] and "300000" in out.content
    full = Path(out.details["fullOutputPath"])
    assert (await asyncio.to_thread(full.read_text)).startswith("1\n2\n3\n")
    assert updates and all(u for u in updates)


async def test_a_timeout_kills_every_program_of_the_plan(bwrap: Bubblewrap, ws: Path) -> None:
    tag = f"{secrets.randbelow(10**6) + 10**6}.5"
    plan = Plan(steps=(("", (Stage(("sleep", tag)), Stage(("cat",)))),))
    out, _ = await _run(bwrap, ws, f"sleep {tag} | cat", plan, timeout=0.5)
    assert out.is_error and out.details["timedOut"] and "timed out after 0.5 seconds" in out.content
    assert not _running(tag)


async def test_cancelling_kills_every_program_of_the_plan(bwrap: Bubblewrap, ws: Path) -> None:
    tag = f"{secrets.randbelow(10**6) + 10**6}.25"
    started = asyncio.Event()
    plan = Plan(steps=(("", (Stage(("sh", "-c", f"echo started; exec sleep {tag}")), Stage(("cat",)))),))
    ctx = ToolContext(
        workspace=ws,
        fs=LocalFileOps(),
        sandbox=bwrap,
        grant=Grant(plan=plan),
        on_update=lambda _: started.set(),
    )
    task = asyncio.create_task(bash.run({"command": "x"}, ctx))
    await started.wait()  # both programs run: the first printed, the second passed it on
    assert _running(tag)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _running(tag)


def _running(tag: str) -> bool:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if tag.encode() in cmdline and b"sleep" in cmdline and Path(f"/proc/{pid}/stat").exists():
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
                if state != "Z":
                    return True
    return False


async def test_a_program_that_cannot_start_fails_like_a_missing_command(bwrap: Bubblewrap, ws: Path) -> None:
    plan = Plan(steps=(("", (Stage(("no-such-program-kgent",)),)), ("||", (Stage(("echo", "fallback")),))))
    out, _ = await _run(bwrap, ws, "x", plan)
    assert "no-such-program-kgent" in out.content and "fallback" in out.content


async def test_a_relative_or_workspace_path_entry_never_finds_a_planted_program(
    bwrap: Bubblewrap, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = ws / "bin"
    planted.mkdir()
    (planted / "cat").write_text("#!/bin/sh\necho PLANTED\n")
    (planted / "cat").chmod(0o755)
    monkeypatch.setenv("PATH", f"bin:{planted}:{os.environ['PATH']}")
    out, _ = await _run(bwrap, ws, "cat a.txt", _plan(ws, "cat a.txt"))
    assert "PLANTED" not in out.content and "one" in out.content


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t"}
    subprocess.run(
        ["git", *args], cwd=cwd, env={**env, "GIT_COMMITTER_EMAIL": "t@e"}, check=True, capture_output=True
    )


async def test_an_unasked_call_never_sees_a_git_directory_outside(bwrap: Bubblewrap, tmp_path: Path) -> None:
    repo = tmp_path / "outside"
    repo.mkdir()
    _git(repo, "init", "-q", ".")
    (repo / "f.txt").write_text("x\n")
    _git(repo, "add", "f.txt")
    _git(repo, "commit", "-qm", "outside-subject")
    ws = tmp_path / "ws"
    _git(repo, "worktree", "add", "-q", str(ws))
    command = "git log --format=%s"
    args = bwrap.wrap(["true"], workspace=ws, grant=Grant(git=True), env={})[0]
    assert str(repo / ".git") not in " ".join(args)
    unasked, _ = await _run(bwrap, ws, command, Plan(steps=(("", (Stage(("git", "log", "--format=%s")),)),)))
    assert "outside-subject" not in unasked.content and unasked.is_error
    approved = ToolContext(
        workspace=ws,
        fs=LocalFileOps(),
        sandbox=bwrap,
        grant=Grant(git=True, approved=True, outside=(str(repo / ".git"),)),
    )
    out = await bash.run({"command": command}, approved)
    assert "outside-subject" in out.content  # an approved call in a worktree still works
