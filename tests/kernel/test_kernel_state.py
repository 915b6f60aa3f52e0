"""The kernel forgets a session when its last run ends (a long-lived daemon serves thousands), and a resumed
session gets its 'always' rules back from its own permission entries."""

from __future__ import annotations

import asyncio
from pathlib import Path

from helpers import collect
from kgent.core.events import PermissionRequest, PermissionResolved


async def test_per_session_maps_are_empty_once_the_runs_end(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("two-writes", mode="ask")
    runs = [kernel.create_run("write", workspace=workspace) for _ in range(3)]  # three sessions at once
    assert len(kernel._live) == 3
    for run in runs:
        await collect(run, "allow_always")
        await run.result()
    await asyncio.sleep(0)  # done callbacks run one loop step after the result is set (call_soon)
    assert kernel._live == {} and kernel.rules.sessions == {} and kernel.rules.workspaces == {}


async def test_a_resumed_session_gets_its_rules_back(make_kernel, workspace: Path) -> None:
    kernel = make_kernel("two-writes", mode="ask")
    first = kernel.create_run("write", workspace=workspace)
    await collect(first, "allow_always")
    await first.result()
    await asyncio.sleep(0)
    assert kernel.rules.sessions == {}
    again = kernel.create_run("write", workspace=workspace, session_id=first.session_id)
    events = await collect(again, "reject_once")  # a prompt would be rejected: none comes
    assert not [e for e in events if isinstance(e, PermissionRequest)]
    assert {r.source for r in events if isinstance(r, PermissionResolved)} == {"session_rule"}
    await again.result()
    await asyncio.sleep(0)
    assert kernel._live == {} and kernel.rules.sessions == {} and kernel.rules.workspaces == {}
