"""JsonlSessionStore specifics: file layout, durability, torn tails, version checks, the listing cache."""

from __future__ import annotations

import json
import logging
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kgent.core.errors import SessionError
from kgent.session import codec, jsonl
from kgent.session.entries import new_entry
from kgent.session.index import INDEX_NAME
from kgent.session.jsonl import JsonlSessionStore
from kgent.session.paths import sessions_root, workspace_key


def user(parent, text):
    return new_entry("message", parent, message={"role": "user", "text": text})


async def make(root: Path, workspace: Path, sid: str = "s1", n: int = 3) -> tuple[JsonlSessionStore, list]:
    store = JsonlSessionStore(root)
    await store.create(workspace=str(workspace), session_id=sid)
    entries, parent = [], None
    for i in range(n):
        e = user(parent, f"message {i}")
        await store.append(sid, [e])
        entries.append(e)
        parent = e.id
    return store, entries


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


async def test_file_layout_and_header(tmp_path, workspace) -> None:
    store, entries = await make(tmp_path / "sessions", workspace)
    path = store.locate("s1")
    assert path == tmp_path / "sessions" / workspace_key(workspace) / "s1.jsonl"
    assert workspace_key(workspace).startswith("ws-") and len(workspace_key(workspace)) == len("ws-") + 10
    head, *rest = lines(path)
    assert head == {
        "format": "kgent-session",
        "version": 1,
        "id": "s1",
        "workspace": str(workspace),
        "created": head["created"],
    }
    assert [r["id"] for r in rest] == [e.id for e in entries]
    assert rest[1] == {
        "id": entries[1].id,
        "parentId": entries[0].id,
        "type": "message",
        "timestamp": entries[1].timestamp,
        "message": {"role": "user", "text": "message 1"},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_workspace_keys_are_readable_and_distinct(tmp_path) -> None:
    a, b = tmp_path / "a" / "proj", tmp_path / "b" / "proj"
    assert workspace_key(a) != workspace_key(b)
    assert workspace_key(a).startswith("proj-") and workspace_key(b).startswith("proj-")
    assert workspace_key(tmp_path / "My Project!").startswith("My-Project-")
    assert workspace_key("/").startswith("root-")


def test_sessions_root(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("KGENT_STATE_DIR", str(tmp_path / "st"))
    assert sessions_root() == tmp_path / "st" / "sessions"
    monkeypatch.delenv("KGENT_STATE_DIR")
    import platformdirs

    assert sessions_root() == Path(platformdirs.user_state_dir("kgent")) / "sessions"


async def test_locate_needs_no_workspace(tmp_path, workspace) -> None:
    store, _ = await make(tmp_path / "sessions", workspace)
    fresh = JsonlSessionStore(tmp_path / "sessions")  # a restart: no cache
    assert fresh.locate("s1") == store.locate("s1")
    assert (await fresh.load("s1")).info.workspace == str(workspace)


async def test_each_append_is_one_write_and_one_fsync(tmp_path, workspace, monkeypatch) -> None:
    store, entries = await make(tmp_path / "sessions", workspace)
    calls = []
    real_fsync, real_write = os.fsync, os.write
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "write", lambda fd, data: (calls.append("write"), real_write(fd, data))[1])
    a = user(entries[-1].id, "a")
    b = user(a.id, "b")
    await store.append("s1", [a, b])
    assert calls == ["write", "fsync"]
    calls.clear()
    await store.set_leaf("s1", a.id)
    assert calls == ["write", "fsync"]


async def test_a_store_on_the_loop_writes_on_its_thread_until_a_write_is_slow(
    tmp_path, workspace, monkeypatch
) -> None:
    """`kgent run`'s store (on_loop): each write and its fsync on the event loop's thread, where a hand-off to a
    worker costs more than the write; once a write is slower than SLOW_WRITE, every later one in a worker thread."""
    store = JsonlSessionStore(tmp_path / "sessions", on_loop=True)
    where: list[str] = []
    slow = False
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        where.append(threading.current_thread().name)
        if slow:
            time.sleep(jsonl.SLOW_WRITE * 3)  # a disk that turned busy
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    loop_thread = threading.current_thread().name
    await store.create(workspace=str(workspace), session_id="s1")
    a = user(None, "a")
    await store.append("s1", [a])
    assert set(where) == {loop_thread} and store.on_loop
    slow, where[:] = True, []
    b = user(a.id, "b")
    await store.append("s1", [b])
    assert where == [loop_thread] and not store.on_loop
    slow, where[:] = False, []
    c = user(b.id, "c")
    await store.append("s1", [c])
    assert len(where) == 1 and where[0] != loop_thread
    loaded = await JsonlSessionStore(tmp_path / "sessions").load("s1")
    assert list(loaded.entries) == [a.id, b.id, c.id]


@pytest.mark.parametrize("tail", [b'{"id":"torn","parentId":null,"ty', b"\x00\x00\x00\x00", b'{"not json\n'])
async def test_a_torn_last_line_is_dropped_then_cut_before_the_next_append(
    tmp_path, workspace, caplog, tail
) -> None:
    _, entries = await make(tmp_path / "sessions", workspace)
    path = JsonlSessionStore(tmp_path / "sessions").locate("s1")
    with path.open("ab") as f:
        f.write(tail)
    store = JsonlSessionStore(tmp_path / "sessions")
    with caplog.at_level(logging.WARNING, logger="kgent.session"):
        tree = await store.load("s1")
    assert list(tree.entries) == [e.id for e in entries]
    assert tree.leaf_id == entries[-1].id
    assert tree.warnings and "dropped" in tree.warnings[0]
    assert any("dropped" in r.getMessage() for r in caplog.records)
    nxt = user(entries[-1].id, "after the crash")
    await store.append("s1", [nxt])
    assert [r.get("id") for r in lines(path)[1:]] == [e.id for e in [*entries, nxt]]  # every line parses
    assert (await JsonlSessionStore(tmp_path / "sessions").load("s1")).warnings == []


async def test_a_torn_tail_is_cut_even_without_a_load_first(tmp_path, workspace) -> None:
    _, entries = await make(tmp_path / "sessions", workspace)
    path = JsonlSessionStore(tmp_path / "sessions").locate("s1")
    with path.open("ab") as f:
        f.write(b'{"id":"x"')
    store = JsonlSessionStore(tmp_path / "sessions")
    nxt = user(entries[-1].id, "next")
    await store.append("s1", [nxt])
    assert lines(path)[-1]["id"] == nxt.id


async def test_damage_before_the_last_line_is_refused(tmp_path, workspace) -> None:
    _, entries = await make(tmp_path / "sessions", workspace)
    path = JsonlSessionStore(tmp_path / "sessions").locate("s1")
    data = path.read_bytes().splitlines(keepends=True)
    data[2] = b"garbage\n"
    path.write_bytes(b"".join(data))
    with pytest.raises(SessionError) as exc:
        await JsonlSessionStore(tmp_path / "sessions").load("s1")
    assert exc.value.code == "session_corrupt"


async def test_a_newer_version_is_refused_clearly(tmp_path, workspace) -> None:
    _, _ = await make(tmp_path / "sessions", workspace)
    path = JsonlSessionStore(tmp_path / "sessions").locate("s1")
    head, *rest = path.read_bytes().splitlines(keepends=True)
    newer = json.loads(head) | {"version": 2}
    path.write_bytes(codec.encode(newer) + b"".join(rest))
    store = JsonlSessionStore(tmp_path / "sessions")
    with pytest.raises(SessionError) as exc:
        await store.load("s1")
    assert exc.value.code == "session_version_unsupported"
    assert "version 2" in exc.value.message and "upgrade kgent" in exc.value.message
    with pytest.raises(SessionError):
        await store.append("s1", [user(None, "x")])  # nor written to
    assert path.read_bytes().startswith(codec.encode(newer))


async def test_a_foreign_file_is_refused(tmp_path, workspace) -> None:
    _, _ = await make(tmp_path / "sessions", workspace)
    path = JsonlSessionStore(tmp_path / "sessions").locate("s1")
    path.write_bytes(b'{"type":"session","version":3}\n')
    with pytest.raises(SessionError) as exc:
        await JsonlSessionStore(tmp_path / "sessions").load("s1")
    assert exc.value.code == "session_corrupt"


async def test_two_stores_on_one_file_stay_consistent(tmp_path, workspace) -> None:
    a, entries = await make(tmp_path / "sessions", workspace)
    b = JsonlSessionStore(tmp_path / "sessions")
    await b.load("s1")
    x = user(entries[-1].id, "from a")
    await a.append("s1", [x])
    y = user(x.id, "from b, child of a's entry")  # b must notice a's append to accept this parent
    await b.append("s1", [y])
    tree = await JsonlSessionStore(tmp_path / "sessions").load("s1")
    assert [e.id for e in tree.branch()][-2:] == [x.id, y.id]


async def test_many_sessions_with_few_open_files(tmp_path, workspace) -> None:
    store = JsonlSessionStore(tmp_path / "sessions", max_open=2)
    parents: dict[str, str | None] = {}
    for i in range(6):
        await store.create(workspace=str(workspace), session_id=f"s{i}")
        parents[f"s{i}"] = None
    for _ in range(3):
        for sid in parents:
            e = user(parents[sid], sid)
            await store.append(sid, [e])
            parents[sid] = e.id
    assert len(store._handles) <= 2
    for sid, leaf in parents.items():
        tree = await JsonlSessionStore(tmp_path / "sessions").load(sid)
        assert tree.leaf_id == leaf and len(tree.entries) == 3
    await store.aclose()
    await store.append("s0", [user(parents["s0"], "after aclose")])  # reopens on demand


async def test_list_uses_and_repairs_its_cache(tmp_path, workspace) -> None:
    store, entries = await make(tmp_path / "sessions", workspace, n=2)
    await store.create(workspace=str(workspace), session_id="s2")
    first = await store.list(str(workspace))
    index = tmp_path / "sessions" / workspace_key(workspace) / INDEX_NAME
    assert index.is_file()
    cached = json.loads(index.read_text())["sessions"]
    assert cached["s1"]["count"] == 2 and cached["s1"]["title"] == "message 0"
    await store.append("s1", [user(entries[-1].id, "third")])
    with store.locate("s1").open("ab") as f:
        f.write(b'{"torn')  # the listing must not count a torn line
    [s1] = [i for i in await JsonlSessionStore(tmp_path / "sessions").list(str(workspace)) if i.id == "s1"]
    assert s1.entry_count == 3 and s1.title == "message 0"
    index.write_text("{not json")
    again = await JsonlSessionStore(tmp_path / "sessions").list(str(workspace))
    assert {i.id: i.entry_count for i in again} == {i.id: i.entry_count + (i.id == "s1") for i in first}


async def test_list_skips_unreadable_files(tmp_path, workspace, caplog) -> None:
    store, _ = await make(tmp_path / "sessions", workspace)
    (store.locate("s1").parent / "broken.jsonl").write_bytes(b"nonsense\n")
    with caplog.at_level(logging.WARNING, logger="kgent.session"):
        infos = await store.list(str(workspace))
    assert [i.id for i in infos] == ["s1"]
    assert any("broken" in r.getMessage() for r in caplog.records)


async def test_a_file_cut_at_any_byte_loads_what_was_complete(tmp_path) -> None:
    """Whatever byte a crash stops at, the file loads (never fatal) with exactly the lines completed before it,
    and appending afterwards leaves a clean file."""
    golden = (Path(__file__).parent.parent / "golden" / "session-v1.jsonl").read_bytes()
    header_end = golden.index(b"\n") + 1
    workspace = json.loads(golden[:header_end])["workspace"]
    path = tmp_path / workspace_key(workspace) / "golden-v1.jsonl"
    path.parent.mkdir(parents=True)
    for cut in range(header_end, len(golden) + 1):
        path.write_bytes(golden[:cut])
        complete = golden[: golden.rfind(b"\n", 0, cut) + 1]
        expected = [json.loads(x)["id"] for x in complete.splitlines()[1:] if b'"id"' in x[:6]]
        store = JsonlSessionStore(tmp_path)
        tree = await store.load("golden-v1")
        assert list(tree.entries) == expected
        assert bool(tree.warnings) == (cut != len(complete))
        if cut % 97 == 0 and tree.leaf_id is not None:
            await store.append("golden-v1", [user(tree.leaf_id, "after")])
            assert path.read_bytes().startswith(complete) and path.read_bytes().endswith(b"\n")
            assert len(JsonlSessionStore(tmp_path)._load("golden-v1").entries) == len(expected) + 1
            await store.aclose()


async def test_a_cancelled_append_still_lands_before_the_cancel_propagates(
    tmp_path, workspace, monkeypatch
) -> None:
    import asyncio
    import threading

    store, entries = await make(tmp_path / "sessions", workspace)
    real_fsync = os.fsync
    syncing, disk_done = threading.Event(), threading.Event()

    def slow_fsync(fd: int) -> None:  # a slow disk: the write is under way until the test lets it finish
        syncing.set()
        disk_done.wait(30)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    nxt = user(entries[-1].id, "written while cancelled")
    task = asyncio.create_task(store.append("s1", [nxt]))
    assert await asyncio.to_thread(syncing.wait, 30)  # the append is inside its fsync now
    task.cancel()
    disk_done.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert (await JsonlSessionStore(tmp_path / "sessions").load("s1")).leaf_id == nxt.id
    after = user(nxt.id, "the next batch chains onto it")
    await store.append("s1", [after])


async def test_a_load_during_an_append_sees_no_torn_line(tmp_path, workspace, monkeypatch) -> None:
    """A slow disk writes a batch in pieces; a load meanwhile (an editor reading a live session) must not report the
    half-written batch as a torn line. The disk stops after the first piece until the load is under way."""
    import asyncio
    import threading

    store, entries = await make(tmp_path / "sessions", workspace)
    real_write = os.write
    first_piece, go_on, load_started = threading.Event(), threading.Event(), threading.Event()

    def in_pieces(fd, data):
        written = real_write(fd, bytes(data[: max(1, len(data) // 2)]))
        if not first_piece.is_set():
            first_piece.set()
            go_on.wait(30)
        return written

    class Watched:
        """The session's write lock, telling when a reader reaches it."""

        def __init__(self, lock: Any) -> None:
            self.lock = lock

        def __enter__(self) -> Any:
            load_started.set()
            return self.lock.__enter__()

        def __exit__(self, *exc: Any) -> Any:
            return self.lock.__exit__(*exc)

        def acquire(self, *args: Any) -> Any:
            return self.lock.acquire(*args)

        def release(self) -> None:
            self.lock.release()

    monkeypatch.setattr(os, "write", in_pieces)
    batch = [user(entries[-1].id, "x" * 4000)]
    append = asyncio.create_task(store.append("s1", batch))
    assert await asyncio.to_thread(first_piece.wait, 30)  # half the batch is on disk
    handle = store._handles["s1"]
    handle.lock = Watched(handle.lock)  # the writer holds the real lock; it releases it through this
    load = asyncio.create_task(store.load("s1"))
    assert await asyncio.to_thread(load_started.wait, 30)
    go_on.set()
    tree = await load
    await append
    assert tree.warnings == [] and tree.leaf_id in (entries[-1].id, batch[0].id)


async def test_text_that_is_not_valid_unicode_round_trips(tmp_path: Path) -> None:
    store = JsonlSessionStore(tmp_path / "sessions")
    info = await store.create(workspace=str(tmp_path))
    odd = {"role": "user", "text": "half a pair: \ud800 and é"}
    await store.append(info.id, [new_entry("message", None, message=odd)])
    await store.aclose()
    tree = await JsonlSessionStore(tmp_path / "sessions").load(info.id)
    assert [e.data["message"] for e in tree.branch()] == [odd]


async def test_a_long_lived_store_remembers_a_bounded_number_of_session_paths(
    tmp_path: Path, monkeypatch
) -> None:
    """A daemon creates sessions without end: where each lives is remembered for the newest MAX_KNOWN_PATHS only;
    an older one is found again by a scan."""
    from kgent.session import jsonl

    monkeypatch.setattr(jsonl, "MAX_KNOWN_PATHS", 3)
    store = JsonlSessionStore(tmp_path / "sessions", max_open=2)
    ids = [(await store.create(workspace=str(tmp_path))).id for _ in range(6)]
    assert len(store._paths) <= 3
    fresh = JsonlSessionStore(tmp_path / "sessions")
    for sid in ids:  # every one is still there, the forgotten ones found by a scan
        assert (await store.load(sid)).info.id == sid
        assert (await fresh.load(sid)).info.id == sid
    assert len(store._paths) <= 3
    await store.aclose()
    await fresh.aclose()
