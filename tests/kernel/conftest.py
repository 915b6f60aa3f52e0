"""Fixtures for kernel tests: a workspace with sample.py and a kernel on a script."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sample.py").write_text("value = 1\nprint(value)\n")
    return ws


@pytest.fixture
def make_kernel() -> Callable[..., AgentKernel]:
    def make(script: Any, mode: str = "ask", **config: Any) -> AgentKernel:
        return AgentKernel(ScriptedProvider(script), config=KernelConfig(mode=mode, **config))

    return make
