"""Service, below the wire: what a request does to a session keeps runs off it meanwhile, and an early compaction
does not fix the runs' settings before the first run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kgent.service import wire as W
from kgent.service.errors import ServiceError
from kgent.service.handshake import Settings
from kgent.service.service import Service
from kgent.session.entries import new_entry
from kgent.testing.ports import MemoryPort


@pytest.fixture
def svc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Service:
    monkeypatch.setenv("KGENT_STATE_DIR", str(tmp_path / "state"))
    return Service({"KGENT_PROVIDER": "scripted"}, Settings(), MemoryPort())


async def session(svc: Service, workspace: Path) -> list[str]:
    await svc.store.create(workspace=str(workspace), session_id="s1")
    u = new_entry("message", None, message={"role": "user", "text": "hi"})
    a = new_entry("message", u.id, message={"role": "assistant", "text": "hello", "stopReason": "end"})
    await svc.store.append("s1", [u, a])
    return [u.id, a.id]


async def test_no_run_starts_while_a_fork_moves_the_leaf(svc: Service, tmp_path: Path) -> None:
    user, _ = await session(svc, tmp_path)
    gate, moving = asyncio.Event(), asyncio.Event()
    real = svc.store.set_leaf

    async def slow_set_leaf(session_id: str, entry_id: str | None) -> None:
        moving.set()
        await gate.wait()
        await real(session_id, entry_id)

    svc.store.set_leaf = slow_set_leaf  # type: ignore[method-assign]
    fork = asyncio.create_task(svc.fork("s1", user))
    await asyncio.wait_for(moving.wait(), 30)  # the fork is now moving the leaf
    try:
        with pytest.raises(ServiceError) as busy:
            await svc.start_run(W.RunParams.parse({"prompt": "x", "sessionId": "s1"}))
        assert busy.value.name == "session_busy" and "forked" in busy.value.message
    except BaseException:
        gate.set()
        await svc.close()  # a run that was let in must not hang the test
        raise
    gate.set()
    assert (await fork).wire() == {"sessionId": "s1", "leafId": user}
    handle = await svc.start_run(W.RunParams.parse({"prompt": "x", "sessionId": "s1"}))  # free again
    handle.start()
    await asyncio.wait_for(handle.task, 30)  # type: ignore[arg-type]
    await svc.close()


async def test_a_compaction_before_the_first_run_leaves_approval_timeout_open(
    svc: Service, tmp_path: Path
) -> None:
    await session(svc, tmp_path)
    assert (await svc.compact(W.CompactParams.parse({"sessionId": "s1"}))).compacted is False
    svc.initialize({"protocolVersion": 1, "settings": {"approvalTimeout": 0.5}})
    assert svc.kernel_config().approval_timeout == 0.5
    await svc.close()


def test_a_run_on_another_provider_never_carries_the_connections_kgent_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGENT_STATE_DIR", str(tmp_path / "state"))
    env = {
        "KGENT_PROVIDER": "openai",
        "KGENT_API_KEY": "sk-connection-key",
        "ANTHROPIC_API_KEY": "sk-ant-own",
    }
    svc = Service(env, Settings(), MemoryPort())
    assert svc.provider_config(None, None).api_key == "sk-connection-key"  # the connection's own provider
    other = svc.provider_config("anthropic", None)
    assert (
        other.provider == "anthropic" and other.api_key == "sk-ant-own"
    )  # that vendor's own key, not KGENT_API_KEY
    bare = Service(
        {"KGENT_PROVIDER": "openai", "KGENT_API_KEY": "sk-connection-key"}, Settings(), MemoryPort()
    )
    with pytest.raises(
        Exception, match="no API key"
    ):  # nothing of its own: refused, never handed the other key
        bare.provider_config("anthropic", None)
