"""Spill files: private (0600 in a 0700 per-run directory), capped to their head and tail with the dropped middle
counted, and deleted when their run ends (leftovers of a dead process are swept later)."""

from __future__ import annotations

import asyncio
import os
import stat
import time
from pathlib import Path

import pytest

from kgent.core.events import ToolUpdate
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider
from kgent.sandbox import spill
from kgent.tools.base import ToolContext
from kgent.tools.bash import BashTool


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _bytes(path: Path) -> bytes:
    return path.read_bytes()


def _is_file(path: Path) -> bool:
    return path.is_file()


async def test_a_spill_file_is_private(make_ctx, tmp_path: Path) -> None:
    out = await BashTool().run({"command": "seq 1 5000"}, make_ctx(output_dir=tmp_path / "run-x"))
    path = Path(out.details["fullOutputPath"])
    assert path.parent == tmp_path / "run-x"
    assert _mode(path) == 0o600 and _mode(path.parent) == 0o700
    assert _bytes(path).splitlines()[-1] == b"5000"


async def test_a_spill_file_keeps_its_head_and_tail_and_counts_the_rest(
    make_ctx, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spill, "HEAD_BYTES", 64 * 1024)
    monkeypatch.setattr(spill, "TAIL_BYTES", 32 * 1024)
    out = await BashTool().run({"command": "seq 1 400000"}, make_ctx())  # ~2.6 MB
    path = Path(out.details["fullOutputPath"])
    data = _bytes(path)
    total = sum(len(f"{i}\n") for i in range(1, 400001))
    dropped = total - 64 * 1024 - 32 * 1024
    assert out.details["outputDroppedBytes"] == dropped
    assert data.startswith(b"1\n2\n3\n") and data.endswith(b"399999\n400000\n")
    assert f"({dropped} bytes) dropped".encode() in data
    assert len(data) < 64 * 1024 + 32 * 1024 + 100
    assert f"Output saved to {path}: its first 64.0KB and last 32.0KB" in out.content
    assert (
        "\n400000\n\n[Showing lines 398001-400000 of 400000." in out.content
    )  # the model still sees the tail


async def test_a_runs_spill_files_are_deleted_when_it_ends(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = [[{"tool": "bash", "args": {"command": "seq 1 5000"}}], [{"text": "done"}]]
    kernel = AgentKernel(ScriptedProvider(script), config=KernelConfig(mode="full"))
    run = kernel.create_run("go", workspace=ws)
    seen: list[Path] = []
    async for event in run:
        if isinstance(event, ToolUpdate) and "fullOutputPath" in (event.details or {}):
            path = Path(event.details["fullOutputPath"])
            assert _is_file(path) and path.parent == spill.run_dir(run.run_id)  # there while the run lasts
            seen.append(path)
    await run.result()
    await asyncio.sleep(0)  # the run's end callbacks run on the next loop turn
    assert seen and not seen[0].exists() and not spill.run_dir(run.run_id).exists()
    await kernel.aclose()


def test_leftovers_of_dead_processes_are_swept(tmp_path: Path) -> None:
    stale = spill.private_dir(spill.run_dir("run-stale-test"))
    fresh = spill.private_dir(spill.run_dir("run-fresh-test"))
    (stale / "kgent-bash-x.log").write_text("old")
    old = time.time() - spill.STALE_SECONDS - 60
    os.utime(stale, (old, old))
    spill.sweep()
    assert not stale.exists() and fresh.exists()
    spill.release("run-fresh-test")
    assert not fresh.exists()
    assert _mode(spill.root()) == 0o700


async def test_without_an_output_dir_spills_go_to_the_private_root(tmp_path: Path) -> None:
    from kgent.files.ops import LocalFileOps

    ctx = ToolContext(workspace=tmp_path, fs=LocalFileOps())
    out = await BashTool().run({"command": "seq 1 5000"}, ctx)
    path = Path(out.details["fullOutputPath"])
    assert path.parent == spill.root() and _mode(path) == 0o600
    os.unlink(path)
