"""Both session stores behind one fixture, so the contract tests run against each; sessions never touch the real
state directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kgent.session.jsonl import JsonlSessionStore
from kgent.session.memory import InMemorySessionStore


@pytest.fixture(autouse=True)
def _state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path / "state"
    monkeypatch.setenv("KGENT_STATE_DIR", str(state))
    return state


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture(params=["memory", "jsonl"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], object]:
    """A factory: each call is the store after a restart (a new JsonlSessionStore on the same root; the same
    InMemorySessionStore, which has nothing to restart from)."""
    if request.param == "memory":
        memory = InMemorySessionStore()
        return lambda: memory
    root = tmp_path / "sessions"
    return lambda: JsonlSessionStore(root)
