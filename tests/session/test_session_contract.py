"""The SessionStore contract, run against InMemorySessionStore and JsonlSessionStore alike."""

from __future__ import annotations

import asyncio

import pytest

from kgent.core.errors import SessionError, SessionNotFound
from kgent.session.entries import SessionEntry, new_entry
from kgent.session.store import SessionStore


def user(parent: str | None, text: str) -> SessionEntry:
    return new_entry("message", parent, message={"role": "user", "text": text})


def assistant(parent: str | None, text: str) -> SessionEntry:
    return new_entry("message", parent, message={"role": "assistant", "text": text, "stopReason": "end"})


async def seed(store: SessionStore, workspace: str, sid: str = "s1") -> list[SessionEntry]:
    await store.create(workspace=workspace, session_id=sid)
    config = new_entry("config", None, mode="ask", provider="scripted", model="hello")
    u = user(config.id, "Fix the bug\nin parser.py")
    a = assistant(u.id, "Done.")
    await store.append(sid, [config])
    await store.append(sid, [u, a])
    return [config, u, a]


def test_both_stores_implement_the_protocol(stores) -> None:
    assert isinstance(stores(), SessionStore)


async def test_create_append_load(stores, workspace) -> None:
    store = stores()
    info = await store.create(workspace=str(workspace), session_id="s1")
    assert (info.id, info.workspace, info.entry_count, info.leaf_id) == ("s1", str(workspace), 0, None)
    config = new_entry("config", None, mode="ask", provider="scripted", model="hello")
    u = user(config.id, "Fix the bug\nin parser.py")
    a = assistant(u.id, "Done.")
    await store.append("s1", [config])
    await store.append("s1", [u, a])
    entries = [config, u, a]
    tree = await stores().load("s1")
    assert list(tree.entries) == [e.id for e in entries]
    assert tree.leaf_id == entries[-1].id
    assert [e.to_dict() for e in tree.branch()] == [e.to_dict() for e in entries]
    assert tree.info.title == "Fix the bug"
    assert tree.info.entry_count == 3


async def test_create_refuses_an_existing_or_unsafe_id(stores, workspace) -> None:
    store = stores()
    await store.create(workspace=str(workspace), session_id="s1")
    with pytest.raises(SessionError) as exc:
        await stores().create(workspace=str(workspace), session_id="s1")
    assert exc.value.code == "session_exists"
    for bad in ("../evil", "a/b", ".hidden", "x" * 65, "sp ace"):
        with pytest.raises(SessionError):
            await store.create(workspace=str(workspace), session_id=bad)


async def test_create_without_an_id_makes_one(stores, workspace) -> None:
    store = stores()
    a = await store.create(workspace=str(workspace))
    b = await store.create(workspace=str(workspace))
    assert a.id != b.id and a.id and b.id


async def test_unknown_session(stores) -> None:
    store = stores()
    with pytest.raises(SessionNotFound):
        await store.load("nope")
    with pytest.raises(SessionNotFound):
        await store.append("nope", [user(None, "x")])
    for call in (store.load("../etc"), store.append("a/b", [user(None, "x")]), store.set_leaf(".x", None)):
        with pytest.raises(SessionError) as bad:  # not a possible id: refused as such, by both stores
            await call
        assert bad.value.code == "invalid_session_id"


async def test_append_refuses_a_bad_batch_whole(stores, workspace) -> None:
    store = stores()
    entries = await seed(store, str(workspace))
    good = user(entries[-1].id, "next")
    orphan = user("missing", "orphan")
    with pytest.raises(SessionError):
        await store.append("s1", [good, orphan])
    with pytest.raises(SessionError):
        await store.append("s1", [SessionEntry(**{**_fields(entries[1]), "parent_id": entries[-1].id})])
    tree = await stores().load("s1")
    assert list(tree.entries) == [e.id for e in entries]  # nothing of either batch
    await store.append("s1", [good])  # the store is still usable
    assert (await stores().load("s1")).leaf_id == good.id


def _fields(e: SessionEntry) -> dict:
    return {"id": e.id, "parent_id": e.parent_id, "type": e.type, "timestamp": e.timestamp, "data": e.data}


async def test_fork_with_set_leaf_branches_and_keeps_the_old_branch(stores, workspace) -> None:
    store = stores()
    config, u, a = await seed(store, str(workspace))
    await store.set_leaf("s1", u.id)
    tree = await stores().load("s1")  # durable: survives a restart
    assert tree.leaf_id == u.id
    b = assistant(u.id, "Another answer.")
    await stores().append("s1", [b])
    tree = await stores().load("s1")
    assert tree.leaf_id == b.id
    assert [e.id for e in tree.branch()] == [config.id, u.id, b.id]
    assert [e.id for e in tree.branch(a.id)] == [config.id, u.id, a.id]  # the old branch is still readable
    assert {e.id for e in tree.children(u.id)} == {a.id, b.id}
    assert set(tree.leaves()) == {a.id, b.id}


async def test_set_leaf_checks_the_entry_and_accepts_none(stores, workspace) -> None:
    store = stores()
    await seed(store, str(workspace))
    with pytest.raises(SessionError) as exc:
        await store.set_leaf("s1", "missing")
    assert exc.value.code == "entry_not_found"
    await store.set_leaf("s1", None)
    tree = await stores().load("s1")
    assert tree.leaf_id is None and tree.branch() == []
    root = user(None, "a fresh start")
    await store.append("s1", [root])
    assert (await stores().load("s1")).branch() == [root]


async def test_labels(stores, workspace) -> None:
    store = stores()
    config, u, a = await seed(store, str(workspace))
    entry = await store.label("s1", u.id, "the ask")
    tree = await stores().load("s1")
    assert tree.labels() == {u.id: "the ask"}
    assert tree.leaf_id == entry.id and entry.parent_id == a.id  # appended at the leaf: the branch goes on
    await store.label("s1", u.id, None)
    assert (await stores().load("s1")).labels() == {}
    with pytest.raises(SessionError):
        await store.label("s1", "missing", "x")


async def test_list_per_workspace(stores, workspace, tmp_path) -> None:
    store = stores()
    other = tmp_path / "other"
    other.mkdir()
    await seed(store, str(workspace), "s1")
    await asyncio.sleep(0.005)  # timestamps have millisecond resolution
    await store.create(workspace=str(workspace), session_id="s2")
    await store.append("s2", [user(None, "  second task  ")])
    await store.create(workspace=str(other), session_id="s3")
    infos = await stores().list(str(workspace))
    assert [i.id for i in infos] == ["s2", "s1"]  # most recently updated first
    s1 = infos[1]
    assert (s1.title, s1.entry_count, s1.workspace) == ("Fix the bug", 3, str(workspace))
    assert s1.leaf_id == (await store.load("s1")).leaf_id
    assert s1.updated >= s1.created
    assert infos[0].title == "second task"
    assert [i.id for i in await stores().list(str(other))] == ["s3"]
    assert await stores().list(str(tmp_path / "nowhere")) == []


async def test_list_follows_appends_and_leaf_moves(stores, workspace) -> None:
    store = stores()
    config, u, a = await seed(store, str(workspace))
    assert (await store.list(str(workspace)))[0].entry_count == 3
    more = assistant(a.id, "more")
    await store.append("s1", [more])
    await store.set_leaf("s1", u.id)
    [info] = await stores().list(str(workspace))
    assert (info.entry_count, info.leaf_id) == (4, u.id)


async def test_load_returns_an_independent_copy(stores, workspace) -> None:
    store = stores()
    entries = await seed(store, str(workspace))
    tree = await store.load("s1")
    tree.entries.clear()
    tree.leaf_id = None
    again = await store.load("s1")
    assert list(again.entries) == [e.id for e in entries]


async def test_a_title_entry_names_the_session_until_cleared(stores, workspace) -> None:
    store = stores()
    config, u, a = await seed(store, str(workspace))
    await store.list(str(workspace))  # an index written before the title (the JSONL store's listing cache)
    await store.append("s1", [new_entry("title", a.id, title="Parser")])
    for s in (store, stores()):
        assert [i.title for i in await s.list(str(workspace))] == ["Parser"]
        assert (await s.load("s1")).info.title == "Parser"
    tree = await store.load("s1")
    await store.append("s1", [new_entry("title", tree.leaf_id, title="")])
    assert [i.title for i in await stores().list(str(workspace))] == ["Fix the bug"]


async def test_delete(stores, workspace) -> None:
    store = stores()
    await seed(store, str(workspace), "s1")
    await seed(store, str(workspace), "s2")
    assert {i.id for i in await store.list(str(workspace))} == {"s1", "s2"}
    await store.delete("s1")
    for s in (store, stores()):
        assert [i.id for i in await s.list(str(workspace))] == ["s2"]
        with pytest.raises(SessionNotFound):
            await s.load("s1")
    with pytest.raises(SessionNotFound):
        await store.delete("s1")
    await store.create(workspace=str(workspace), session_id="s1")  # the id is free again
