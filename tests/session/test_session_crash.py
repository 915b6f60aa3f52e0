"""Crash safety end to end: `kgent run` is killed with SIGKILL mid-run; the session loads with every entry that was
on disk before the kill, and `kgent run --session ID continue` settles on it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgent.session.jsonl import JsonlSessionStore


def kgent(*args: str, env: dict[str, str], **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "kgent.cli.main", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kw)


def complete_lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return data[: data.rfind(b"\n") + 1].splitlines()


def test_sigkill_mid_run_then_resume(tmp_path: Path) -> None:
    pytest.importorskip("kgent.cli.run", reason="needs the `kgent run` command")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("hello\n")
    script = tmp_path / "long.json"
    turns = [[{"text": f"Step {i}."}, {"sleep": 0.01}, {"tool": "ls", "args": {}}] for i in range(400)]
    script.write_text(json.dumps(turns + [[{"text": "All steps done."}]]))
    env = {**os.environ, "KGENT_STATE_DIR": str(tmp_path / "state")}
    env.pop("KGENT_PROVIDER", None)
    common = ["--provider", "scripted", "--mode", "full", "--workspace", str(workspace)]

    proc = kgent("run", *common, "--model", str(script), "--max-turns", "1000", "--json", "walk the steps", env=env)
    sessions = tmp_path / "state" / "sessions"
    deadline = time.monotonic() + 120  # the child starts Python and imports kgent first: slow on a busy machine
    path = None
    try:
        while time.monotonic() < deadline:
            found = list(sessions.glob("*/*.jsonl")) if sessions.is_dir() else []
            if found and len(complete_lines(found[0])) >= 25:
                path = found[0]
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.01)
        assert path is not None, "the run wrote too little before the deadline"
        before = complete_lines(path)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL

    with path.open("ab") as f:  # what a kill during a write (or a power cut) leaves behind
        f.write(b'{"id":"torn","parentId":"x","type":"mess')
    sid = path.stem
    store = JsonlSessionStore(sessions)
    import asyncio

    tree = asyncio.run(store.load(sid))
    flushed = [json.loads(line)["id"] for line in before[1:] if b'"id"' in line[:6]]
    assert flushed and all(i in tree.entries for i in flushed)
    assert tree.warnings and "torn" in tree.warnings[0]

    resumed = kgent("run", *common, "--model", "hello", "--session", sid, "--json", "continue", env=env)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err.decode() + out.decode()
    final = json.loads(out.splitlines()[-1])
    assert final["result"]["status"] == "settled" and final["result"]["sessionId"] == sid

    lines = path.read_bytes().splitlines()
    assert all(json.loads(line) for line in lines)  # the torn bytes were cut, nothing glued onto them
    tree = asyncio.run(JsonlSessionStore(sessions).load(sid))
    assert tree.warnings == []
    messages = [e.data["message"] for e in tree.branch() if e.type == "message"]
    assert messages[-2] == {"role": "user", "text": "continue"}
    assert messages[-1]["text"].startswith("Hello from the scripted provider")
    assert all(i in tree.entries for i in flushed)
