"""Ext fixtures: a private user config dir (KGENT_CONFIG_DIR) and a scripted kernel wired to an Extensions."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kgent.core.events import Event, RunResult
from kgent.ext.host import Extensions
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider


@pytest.fixture(autouse=True)
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config"
    path.mkdir()
    monkeypatch.setenv("KGENT_CONFIG_DIR", str(path))
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


def user_extension(config_dir: Path, source: str, name: str = "audit") -> None:
    """Write `source` as an extension file and load it from the user config file."""
    path = config_dir / f"{name}.py"
    path.write_text(source)
    with (config_dir / "config.toml").open("a") as f:
        f.write(f'[extensions]\nload = ["{path}"]\n')


async def run_script(
    tmp_path: Path, workspace: Path, turns: list[Any], ext: Extensions, mode: str = "full"
) -> tuple[list[Event], RunResult, AgentKernel]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    kernel = AgentKernel(ScriptedProvider(str(script)), config=KernelConfig(mode=mode), hooks=ext.hooks)
    run = kernel.create_run("go", workspace=workspace)
    events = [e async for e in run]
    return events, await run.result(), kernel


MakeExt = Callable[..., Extensions]
