"""agent/renameSession and agent/deleteSession below the wire: a person's title wins over the derived one and survives
a restart ('' clears it); a delete removes the file and its index row, and neither touches a session with a live run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kgent.core.errors import SessionNotFound
from kgent.service import wire as W
from kgent.service.errors import ServiceError
from kgent.service.handshake import Settings
from kgent.service.service import Service
from kgent.session.entries import new_entry
from kgent.session.jsonl import JsonlSessionStore
from kgent.testing.ports import MemoryPort

ENV = {"KGENT_PROVIDER": "scripted"}


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KGENT_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


async def session(svc: Service, workspace: Path, sid: str = "s1") -> None:
    await svc.store.create(workspace=str(workspace), session_id=sid)
    u = new_entry("message", None, message={"role": "user", "text": "Fix the parser\nplease"})
    a = new_entry("message", u.id, message={"role": "assistant", "text": "done", "stopReason": "end"})
    await svc.store.append(sid, [u, a])


async def titles(svc: Service, workspace: Path) -> dict[str, str]:
    listed = (await svc.sessions(str(workspace))).wire()["sessions"]
    return {s["sessionId"]: s["title"] for s in listed}


async def test_a_given_title_wins_survives_a_restart_and_clears(state: Path, tmp_path: Path) -> None:
    svc = Service(ENV, Settings(), MemoryPort())
    await session(svc, tmp_path)
    assert await titles(svc, tmp_path) == {"s1": "Fix the parser"}
    await svc.rename_session("s1", "  Parser work ")
    assert await titles(svc, tmp_path) == {"s1": "Parser work"}
    assert (await svc.session("s1", False)).wire()["title"] == "Parser work"
    # the model's context is unchanged: a later user message does not replace the given title either
    tree = await svc.store.load("s1")
    more = new_entry("message", tree.leaf_id, message={"role": "user", "text": "and the lexer"})
    await svc.store.append("s1", [more])
    assert await titles(svc, tmp_path) == {"s1": "Parser work"}
    await svc.close()

    again = Service(
        ENV, Settings(), MemoryPort()
    )  # a restart: a new store on the same files (and the same index)
    assert await titles(again, tmp_path) == {"s1": "Parser work"}
    await again.rename_session("s1", "")
    assert await titles(again, tmp_path) == {"s1": "Fix the parser"}
    await again.rename_session("s1", "Second name")
    await again.close()
    # a store with no index at all reads the same from the file
    (next((state / "sessions").glob("*/.index.json"))).unlink()
    fresh = JsonlSessionStore(state / "sessions")
    assert [i.title for i in await fresh.list(str(tmp_path))] == ["Second name"]
    assert (await fresh.load("s1")).info.title == "Second name"
    await fresh.aclose()


def test_rename_params_are_checked() -> None:
    assert W.RenameSessionParams.parse({"sessionId": "s1", "title": "x" * 200}).title == "x" * 200
    for bad in ({"sessionId": "s1", "title": "x" * 201}, {"sessionId": "s1"}, {"title": "x"}):
        with pytest.raises(Exception) as err:
            W.RenameSessionParams.parse(bad)
        assert "invalid params" in str(err.value)


async def test_delete_removes_the_file_and_its_index_row(state: Path, tmp_path: Path) -> None:
    svc = Service(ENV, Settings(), MemoryPort())
    await session(svc, tmp_path, "s1")
    await session(svc, tmp_path, "s2")
    assert set(await titles(svc, tmp_path)) == {"s1", "s2"}  # writes the index
    directory = next((state / "sessions").glob("*/"))
    await svc.delete_session("s1")
    assert not (directory / "s1.jsonl").exists()
    index = json.loads((directory / ".index.json").read_text())
    assert set(index["sessions"]) == {"s2"}
    assert set(await titles(svc, tmp_path)) == {"s2"}
    with pytest.raises(SessionNotFound):
        await svc.delete_session("s1")  # a second delete
    with pytest.raises(SessionNotFound):
        await svc.rename_session("s1", "x")
    await svc.close()


async def test_a_live_run_keeps_its_session(state: Path, tmp_path: Path) -> None:
    port = MemoryPort()  # approvals are never answered: a run that asks stays live
    svc = Service(ENV, Settings(), port)
    handle = await svc.start_run(
        W.RunParams.parse(
            {"prompt": "go", "workspace": str(tmp_path), "model": "read-then-write", "mode": "ask"}
        )
    )
    handle.start()
    try:
        await port.until(lambda: bool(port.asked), within=60)  # the run waits for an approval: it is live
        with pytest.raises(ServiceError) as busy:
            await svc.delete_session(handle.session_id)
        assert busy.value.name == "session_busy"
        with pytest.raises(ServiceError) as busy:
            await svc.rename_session(handle.session_id, "x")
        assert busy.value.name == "session_busy"
        assert handle.session_id in await titles(svc, tmp_path)
    finally:
        svc.cancel(handle.run_id)
        await asyncio.wait_for(handle.task, 60)  # type: ignore[arg-type]
    await svc.delete_session(handle.session_id)  # free once it has ended
    assert await titles(svc, tmp_path) == {}
    await svc.close()
