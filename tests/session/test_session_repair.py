"""Damaged sessions: a line of the wrong shape is `session_corrupt` naming the file, the line and the byte offset;
`repair` keeps every valid entry and reports what it dropped; one writer at a time (flock), the second told who."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kgent.core.errors import SessionCorrupt, SessionError
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider
from kgent.session import codec
from kgent.session.entries import new_entry
from kgent.session.jsonl import JsonlSessionStore


def user(parent: str | None, text: str):  # type: ignore[no-untyped-def]
    return new_entry("message", parent, message={"role": "user", "text": text})


async def _session(root: Path, workspace: Path, n: int = 4) -> tuple[Path, list]:
    store = JsonlSessionStore(root)
    await store.create(workspace=str(workspace), session_id="s1")
    entries, parent = [], None
    for i in range(n):
        e = user(parent, f"message {i}")
        await store.append("s1", [e])
        entries.append(e)
        parent = e.id
    await store.aclose()
    return store.locate("s1"), entries


def _read(path: Path) -> bytes:
    return path.read_bytes()


def _hold_lock(path: Path) -> subprocess.Popen[str]:
    """Another process holding the session file's flock (it prints `locked` once it has it)."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def _replace_line(path: Path, index: int, obj: object) -> int:
    """Put `obj` on line `index` (0 = header); returns that line's byte offset."""
    lines = path.read_bytes().splitlines(keepends=True)
    offset = sum(len(x) for x in lines[:index])
    lines[index] = json.dumps(obj).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    return offset


BAD_SHAPES = [
    ({"message": "just a string"}, "message should be an object"),
    ({"message": {"role": "user", "text": 3}}, "message.text should be a string"),
    ({"message": {"role": "robot", "text": "x"}}, "message.role 'robot'"),
    ({"message": {"role": "assistant", "toolCalls": "ls"}}, "message.toolCalls should be a list"),
    ({"message": {"role": "assistant", "toolCalls": [{"id": 1, "name": "ls"}]}}, "toolCalls[0].id should be"),
    ({"message": {"role": "tool", "toolCallId": "c", "name": "ls"}}, "message has no 'content'"),
    ({"type": "compaction", "summary": None}, "compaction.summary should be a string"),
    ({"type": "label", "targetId": 5}, "label.targetId should be a string"),
    ({"timestamp": 7}, "entry.timestamp should be a string"),
]


@pytest.mark.parametrize(("change", "says"), BAD_SHAPES)
@pytest.mark.parametrize("where", ["middle", "last"])
async def test_an_entry_of_the_wrong_shape_is_session_corrupt_with_its_place(
    tmp_path: Path, workspace: Path, change: dict, says: str, where: str
) -> None:
    path, entries = await _session(tmp_path / "sessions", workspace)
    index = 2 if where == "middle" else len(entries)  # line 0 is the header
    good = entries[index - 1].to_dict()
    offset = _replace_line(path, index, {**good, **change})
    with pytest.raises(SessionCorrupt) as caught:
        await JsonlSessionStore(tmp_path / "sessions").load("s1")
    err = caught.value
    assert err.code == "session_corrupt" and (err.line, err.offset) == (index + 1, offset)
    assert f"line {index + 1} (byte {offset})" in err.message and str(path) in err.message and says in err.message
    assert "kgent sessions repair s1" in err.message


async def test_a_resumed_run_on_a_damaged_session_fails_with_session_corrupt(tmp_path: Path, workspace: Path) -> None:
    path, entries = await _session(tmp_path / "sessions", workspace)
    _replace_line(path, 2, {**entries[1].to_dict(), "message": "oops"})
    kernel = AgentKernel(ScriptedProvider("hello"), store=JsonlSessionStore(tmp_path / "sessions"))
    result = await kernel.create_run("go on", workspace=workspace, session_id="s1").result()
    assert result.status == "failed" and result.error is not None
    assert result.error["code"] == "session_corrupt" and "line 3" in result.error["message"]
    await kernel.aclose()


async def test_repair_keeps_every_valid_entry_and_reports_the_rest(tmp_path: Path, workspace: Path) -> None:
    root = tmp_path / "sessions"
    path, entries = await _session(root, workspace, n=5)
    original = path.read_bytes()
    lines = original.splitlines(keepends=True)
    bad_offset = sum(len(x) for x in lines[:2])
    lines[2] = b'{"id":"%s","parentId":"%s","type":"message","timestamp":"t","message":"broken"}\n' % (
        entries[1].id.encode(), entries[0].id.encode())
    lines.insert(4, b"not json at all\n")
    lines.append(b'{"type":"leaf","leafId":"nowhere"}\n')
    lines.append(b'{"id":"torn","par')
    path.write_bytes(b"".join(lines))
    store = JsonlSessionStore(root)
    report = await store.repair("s1")
    assert report.kept == 4 and [d.line for d in report.dropped] == [3, 5, 8, 9]
    assert report.dropped[0].offset == bad_offset and "message should be an object" in report.dropped[0].reason
    assert "not JSON" in report.dropped[1].reason and "unknown entry" in report.dropped[2].reason
    assert "torn" in report.dropped[3].reason
    assert [(r.entry_id, r.old_parent, r.new_parent) for r in report.reparented] == [
        (entries[2].id, entries[1].id, entries[0].id)
    ]
    assert report.backup is not None and _read(Path(report.backup)) == b"".join(lines)
    tree = await JsonlSessionStore(root).load("s1")
    assert [e.id for e in tree.branch()] == [entries[0].id, entries[2].id, entries[3].id, entries[4].id]
    assert tree.warnings == []
    again = await store.repair("s1")
    assert not again.changed and again.backup is None
    await store.append("s1", [user(entries[4].id, "after the repair")])  # the store writes to the new file


def test_the_repair_command_prints_what_it_dropped(tmp_path: Path, workspace: Path) -> None:
    import asyncio
    import os

    state = tmp_path / "state"
    path, entries = asyncio.run(_session(state / "sessions", workspace))
    _replace_line(path, 3, {**entries[2].to_dict(), "message": {"role": "user"}})
    env = {**os.environ, "KGENT_STATE_DIR": str(state)}
    broken = subprocess.run([sys.executable, "-m", "kgent", "sessions", "show", "s1"], capture_output=True,
                            text=True, env=env, timeout=60)
    assert broken.returncode == 2 and "line 4" in broken.stderr and "kgent sessions repair s1" in broken.stderr
    out = subprocess.run([sys.executable, "-m", "kgent", "sessions", "repair", "s1"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "kept 3 entries, dropped 1 line(s)" in out.stdout and "dropped line 4 (byte " in out.stdout
    assert "message has no 'text'" in out.stdout and ".damaged" in out.stdout
    shown = subprocess.run([sys.executable, "-m", "kgent", "sessions", "show", "s1"], capture_output=True,
                           text=True, env=env, timeout=60)
    assert shown.returncode == 0 and "message 3" in shown.stdout


# -- one writer at a time ------------------------------------------------------------------------------------------

_HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


async def test_a_second_writer_gets_session_busy_naming_the_other_process(tmp_path: Path, workspace: Path) -> None:
    path, entries = await _session(tmp_path / "sessions", workspace)
    holder = _hold_lock(path)
    try:
        store = JsonlSessionStore(tmp_path / "sessions")
        with pytest.raises(SessionError) as caught:
            await store.append("s1", [user(entries[-1].id, "second writer")])
        assert caught.value.code == "session_busy"
        assert f"pid {holder.pid}" in caught.value.message and "python" in caught.value.message
        assert len(codec.parse(_read(path)).entries) == len(entries)  # nothing written, nothing forked
    finally:
        holder.kill()
        holder.wait()
    await store.append("s1", [user(entries[-1].id, "now it may")])


async def test_a_live_run_holds_its_session(tmp_path: Path, workspace: Path) -> None:
    root = tmp_path / "sessions"
    script = [[{"tool": "bash", "args": {"command": "sleep 30"}}], [{"text": "done"}]]
    kernel = AgentKernel(ScriptedProvider(script), store=JsonlSessionStore(root), config=KernelConfig(mode="full"))
    run = kernel.create_run("wait", workspace=workspace)
    async for event in run:
        if event.type == "tool_update" and event.status == "in_progress":
            break
    other = JsonlSessionStore(root)
    tree = await other.load(run.session_id)  # reading is fine
    with pytest.raises(SessionError) as caught:
        await other.append(run.session_id, [user(tree.leaf_id, "meanwhile")])
    assert caught.value.code == "session_busy"
    run.cancel()
    await run.result()
    import asyncio

    await asyncio.sleep(0)  # the run's end releases the lock
    await other.append(run.session_id, [user((await other.load(run.session_id)).leaf_id, "after the run")])
    await kernel.aclose()
