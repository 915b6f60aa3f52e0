"""No command outlives the daemon: `kill -9` of the daemon (which no handler sees) while an approved full-mode
command runs leaves none of its processes behind — the watchdog (kgent.sandbox.watchdog) kills their groups.
Processes are found in /proc by a marker only this test's commands carry, never by a machine-wide name."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import time
from pathlib import Path

from kgent_host import PATIENCE

from conftest import Spawn
from helpers import processes_with


async def until(condition: object, within: float = PATIENCE) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        await asyncio.sleep(0.05)
    return bool(condition())  # type: ignore[operator]


def script(tmp_path: Path, *calls: dict[str, object]) -> str:
    path = tmp_path / f"script-{secrets.token_hex(4)}.json"
    path.write_text(json.dumps([[{"text": "Running."}, *calls], [{"text": "Done."}]]))
    return str(path)


async def test_kill_9_of_the_daemon_leaves_no_foreground_command(
    spawn: Spawn, workspace: Path, tmp_path: Path
) -> None:
    marker = f"1000.{secrets.randbelow(10**6):06d}"  # sleep reads it as seconds; no other process has it
    host = await spawn()
    command = f"sleep {marker} & sleep {marker}; echo never"
    await host.start_run(
        prompt="Run it",
        workspace=str(workspace),
        model=script(tmp_path, {"tool": "bash", "args": {"command": command}}),
        mode="full",
    )
    assert await until(lambda: len(processes_with(marker)) >= 2), "the command did not start"
    os.kill(host.pid, signal.SIGKILL)
    assert await host.wait_exit() == -signal.SIGKILL
    assert await until(lambda: not processes_with(marker)), f"orphans after kill -9: {processes_with(marker)}"
