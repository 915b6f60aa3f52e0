"""Helpers of the ext tests: an extension file loaded from the user config, and a scripted run with extensions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kgent.core.events import Event, RunResult
from kgent.ext.host import Extensions
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider


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
