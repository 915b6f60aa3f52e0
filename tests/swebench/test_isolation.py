"""Nothing of the future or of the evaluator within the agent's reach: a workspace holds exactly the objects
reachable from base_commit, and a scripted model that goes looking for the fix, the mirror, the output directory and
Kgent's own environment finds none of them (nor the key) — in any trajectory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from swebench_fixtures import MARKER, Fixture, bash, git

from kgent.config import provider_config
from kgent.swebench import EvalConfig, Evaluator, load_instances, select
from kgent.swebench.instances import instance_from_dict
from kgent.swebench.model import provider_factory
from kgent.swebench.workspace import prepare

KEY = "sk-kgent-test-KEY-9b1e44d07a"


def every_object(ws: Path) -> bytes:
    """The content of every object the repository holds, loose or packed, reachable or not."""
    cmd = ["git", "cat-file", "--batch-all-objects", "--batch", "--unordered"]
    return subprocess.run(cmd, cwd=ws, check=True, capture_output=True).stdout


def reachable(ws: Path, commit: str) -> set[str]:
    return {line.split()[0] for line in git("rev-list", "--objects", commit, cwd=ws).splitlines()}


@pytest.mark.parametrize("depth", [None, 1])
async def test_a_workspace_holds_exactly_the_objects_reachable_from_base_commit(
    fixture: Fixture, tmp_path: Path, depth: int | None
) -> None:
    instance = instance_from_dict(fixture.record("acme__calc-1"))
    fix = fixture.future["acme/calc"]
    mirror = fixture.mirrors / "acme__calc.git"
    assert MARKER in git("log", "--all", "--format=%B", cwd=mirror)  # the mirror has the future
    ws = tmp_path / "ws"
    await prepare(instance, mirror, ws, depth=depth)
    assert git("rev-parse", "HEAD", cwd=ws) == instance.base_commit
    history = git("rev-list", "HEAD", cwd=ws).splitlines()
    assert len(history) == (1 if depth == 1 else 2)
    # every object in the repository is one the base commit reaches: nothing else, packed or loose
    held = {
        line.split()[0]
        for line in git("cat-file", "--batch-all-objects", "--batch-check", cwd=ws).splitlines()
    }
    assert held == reachable(ws, "HEAD")
    assert MARKER.encode() not in every_object(ws)
    assert MARKER.encode() in every_object(mirror)  # (the check would see it)
    # and no git command finds the fix
    for args in (
        ("cat-file", "-t", fix),
        ("cat-file", "-p", fix[:8]),
        ("show", fix),
        ("rev-parse", "--verify", "v1"),
        ("rev-parse", "--verify", "later"),
    ):
        with pytest.raises(Exception, match="returned non-zero"):
            git(*args, cwd=ws)
    assert git("fsck", "--unreachable", "--no-reflogs", "--no-progress", cwd=ws) == ""
    assert git("fsck", "--lost-found", "--no-progress", cwd=ws) == ""
    assert MARKER not in git("log", "--all", "--reflog", "-p", "--format=%H %B", cwd=ws)
    assert set(git("log", "--all", "--reflog", "--format=%H", cwd=ws).splitlines()) == set(history)
    assert (
        git("for-each-ref", cwd=ws) == ""
        and git("remote", cwd=ws) == ""
        and git("stash", "list", cwd=ws) == ""
    )
    assert git("reflog", cwd=ws) == ""
    gitdir = ws / ".git"
    for gone in ("FETCH_HEAD", "ORIG_HEAD", "logs", "packed-refs", "objects/info/alternates"):
        assert not (gitdir / gone).exists(), gone
    # its own objects: no pack or loose object shares an inode with the mirror's
    for f in (gitdir / "objects").rglob("*"):
        if f.is_file():
            assert f.stat().st_nlink == 1, f
    raw = b"".join(f.read_bytes() for f in gitdir.rglob("*") if f.is_file())
    assert MARKER.encode() not in raw and str(mirror).encode() not in raw  # not even the mirror's path


def probe_script(fx: Fixture, out: Path) -> list[list[dict[str, Any]]]:
    """What a model would try to find the fix, the evaluator's files and the key, with bash and the file tools
    (never spelling MARKER itself, which the trajectory must not hold)."""
    fix = fx.future["acme/calc"]
    mirror = out / "repos" / "acme__calc.git"
    return [
        [
            bash(
                "echo PROBE-START; git fsck --unreachable --no-reflogs; git log --all --reflog --format='%H %B'"
            )
        ],
        [
            bash(
                f"git cat-file -p {fix}; git cat-file -p {fix[:8]}; git show {fix[:8]}; git log --all -Sfixed: -p"
            )
        ],
        [
            bash(
                f"ls -la {mirror}; git -C {mirror} log --all --format=%B; git -C ../../repos/acme__calc.git log --all"
            )
        ],
        [bash("ls -la .. ../..; cat ../../summary.json ../../canary.txt ../../trajectories/*.jsonl")],
        [bash("cat ../acme__calc-2/calc.py; ls ../../workspaces")],
        [bash(r"tr '\0' '\n' < /proc/$PPID/environ; tr '\0' '\n' < /proc/1/environ; env; ps -ef | head -20")],
        [bash("for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; done 2>/dev/null | sort -u")],
        [bash("ln -sf /proc/self/environ env.txt; ln -sfn ../.. up; echo LINKED")],
        [{"tool": "read", "args": {"path": "../../summary.json"}}],
        [{"tool": "read", "args": {"path": str(out / "canary.txt")}}],
        [{"tool": "read", "args": {"path": "/proc/self/environ"}}],
        [{"tool": "read", "args": {"path": "env.txt"}}],
        [{"tool": "read", "args": {"path": "up/canary.txt"}}],
        [{"tool": "ls", "args": {"path": str(mirror)}}],
        [{"tool": "grep", "args": {"pattern": "CANARY", "path": str(out)}}],
        [{"tool": "find", "args": {"pattern": "*.json", "path": ".."}}],
        [bash("rm -f env.txt up; echo PROBE-END")],
        [{"text": "Nothing to see."}],
    ]


async def test_a_scripted_model_looking_for_the_fix_the_evaluator_and_the_key_finds_none(
    fixture: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    # the default layout: mirrors next door (OUT/repos), workspaces under OUT/workspaces
    shutil.copytree(fixture.mirrors, out / "repos", symlinks=True)
    (out / "canary.txt").write_text(f"EVALUATOR CANARY {MARKER}\n")
    for name in ("KGENT_API_KEY", "DEEPSEEK_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.setenv(name, KEY)
    fixture.script("acme__calc-1", probe_script(fixture, out))
    cfg = EvalConfig(
        out=out,
        model_name="kgent-test",
        mirrors=out / "repos",
        keep_workspaces=True,  # the other instance's workspace sits next door during the probe
        make_provider=provider_factory(provider_config(provider="scripted", script=str(fixture.scripts))),
    )
    instances = select(load_instances(fixture.instances), ["acme__calc-2", "acme__calc-1"])
    records = await Evaluator(cfg).run(instances)
    assert records["acme__calc-1"]["status"] in ("empty_patch", "submitted"), records["acme__calc-1"]
    trajectory = (out / records["acme__calc-1"]["trajectory"]).read_text()
    results = tool_results(trajectory)
    # the probes ran (in the sandbox) and the model saw their output
    assert "PROBE-START" in results[0] and "PROBE-END" in results[-1] and "LINKED" in "".join(results)
    assert "No such file or directory" in results[3]  # ../../summary.json is not there
    assert "outside the workspace" in "".join(results[8:16])  # the file tools refuse to leave it
    for path in out.rglob("*"):
        if path.is_file() and ".git" not in path.parts and "repos" not in path.parts:
            text = path.read_text(errors="replace")
            assert MARKER not in text or path.name == "canary.txt", path
            assert KEY not in text, path
    assert MARKER not in trajectory and KEY not in trajectory
    assert "EVALUATOR CANARY" not in trajectory
    assert '"instance_id": "acme__calc-1"' not in "".join(results)  # summary.json's content never seen


def tool_results(trajectory: str) -> list[str]:
    """The text of each tool result in a session file, in order."""
    found = []
    for line in trajectory.splitlines():
        entry = json.loads(line)
        message = entry.get("message") or {}
        if entry.get("type") == "message" and message.get("role") == "tool":
            found.append(json.dumps(message))
    return found


def test_a_command_cannot_see_the_host_outside_the_workspace(tmp_path: Path) -> None:
    """The local environment's argv, run for real: the workspace is writable, the rest of the host is not there."""
    from kgent.swebench.environments import LocalEnvironment

    ws, outside = tmp_path / "ws", tmp_path / "secret"
    ws.mkdir()
    outside.mkdir()
    (outside / "x").write_text("hidden")
    argv = LocalEnvironment().command(
        ws,
        f"touch made; cat {outside}/x; ls /root /home /work 2>&1 | head -3; echo PPID=$PPID; cat /etc/shadow",
    )
    done = subprocess.run(argv, env={"PATH": os.environ["PATH"]}, capture_output=True, text=True)
    assert (ws / "made").exists()
    assert "hidden" not in done.stdout and "No such file" in done.stderr
    assert "PPID=1" in done.stdout  # bubblewrap's init: Kgent's process is not in this PID namespace
    # a directory given with --ro-bind is seen, read-only
    argv = LocalEnvironment(ro_binds=(outside,)).command(ws, f"cat {outside}/x; touch {outside}/y")
    seen = subprocess.run(argv, env={"PATH": os.environ["PATH"]}, capture_output=True, text=True)
    assert seen.stdout == "hidden" and "Read-only file system" in seen.stderr
    assert not (outside / "y").exists()
