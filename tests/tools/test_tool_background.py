"""Background commands as the tools see them: bash with background: true returns at once with an id and the first
output; bash_output reads new output (waiting for a pattern or the end), bash_input writes a line, bash_stop kills
the process group; the limit says what runs; output past the limits spills to a file; secrets are redacted."""

from __future__ import annotations

import asyncio
import os
import re

import pytest

from kgent.core.redact import remember_secret
from kgent.sandbox import watchdog
from kgent.tools.background import BackgroundCommands
from kgent.tools.base import ToolContext
from kgent.tools.bash import BashTool
from kgent.tools.bgtools import BashInputTool, BashOutputTool, BashStopTool

bash, output, send, stop = BashTool(), BashOutputTool(), BashInputTool(), BashStopTool()


@pytest.fixture
async def bg(make_ctx) -> tuple[ToolContext, BackgroundCommands]:  # type: ignore[no-untyped-def]
    commands = BackgroundCommands("test", limit=2)
    yield make_ctx(background=commands, run_id="run-test"), commands
    await commands.aclose()


def _gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


async def _all_gone(pgids: set[int], within: float = 30.0) -> bool:
    """Whether every group is gone within `within` s: a killed group's last process may be a zombie for a moment
    until it is reaped, and kill(…, 0) still finds a zombie."""
    deadline = asyncio.get_running_loop().time() + within
    while not all(_gone(g) for g in pgids):
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def test_start_read_until_and_end(bg) -> None:  # type: ignore[no-untyped-def]
    ctx, commands = bg
    out = await bash.run({"command": "echo ready; read go; echo later; exit 4", "background": True}, ctx)
    assert not out.is_error and out.details["backgroundId"] == "bg1"
    assert "ready" in out.content and "bg1" in out.content
    assert not (await send.run({"id": "bg1", "text": "go"}, ctx)).is_error
    read = await output.run({"id": "bg1", "wait": 30}, ctx)  # until it ends
    assert "later" in read.content and "ready" not in read.content  # only what is new
    assert "bg1 exited with code 4" in read.content and read.details["exitCode"] == 4
    assert [i.state for i in commands.list()] == ["exited"]


async def test_until_pattern_input_and_stop_kills_the_group(bg) -> None:  # type: ignore[no-untyped-def]
    ctx, commands = bg
    script = "while read line; do echo got:$line; done"
    before = set(watchdog.watched())  # groups of this process's other tests, not this command's
    out = await bash.run({"command": script, "background": True}, ctx)
    assert out.details["state"] == "running"
    sent = await send.run({"id": "bg1", "text": "hello"}, ctx)
    assert not sent.is_error
    read = await output.run({"id": "bg1", "until": "got:hello"}, ctx)
    assert "got:hello" in read.content and "bg1 is running" in read.content
    cmd = commands.get("bg1")
    pgids = set(watchdog.watched()) - before
    assert pgids, "the command's group is not watched"
    stopped = await stop.run({"id": "bg1"}, ctx)
    assert "bg1 was stopped" in stopped.content and cmd.state == "stopped"
    assert await _all_gone(pgids), f"groups left: {[g for g in pgids if not _gone(g)]}"
    late = await send.run({"id": "bg1", "text": "again"}, ctx)
    assert late.is_error and "stdin is closed" in late.content


async def test_the_limit_is_a_clear_error(bg) -> None:  # type: ignore[no-untyped-def]
    ctx, _ = bg
    for _ in range(2):
        assert not (await bash.run({"command": "sleep 60", "background": True}, ctx)).is_error
    third = await bash.run({"command": "sleep 60", "background": True}, ctx)
    assert third.is_error
    assert "at most 2 background commands run at once" in third.content and "bg1, bg2" in third.content
    assert not (await stop.run({"id": "bg1"}, ctx)).is_error
    assert not (await bash.run({"command": "sleep 60", "background": True}, ctx)).is_error
    unknown = await output.run({"id": "bg9"}, ctx)
    assert unknown.is_error and "no background command 'bg9'" in unknown.content


async def test_long_output_spills_and_secrets_are_redacted(bg) -> None:  # type: ignore[no-untyped-def]
    ctx, commands = bg
    secret = "sk-bgtest-" + "q7" * 12
    remember_secret(secret)
    out = await bash.run(
        {"command": f"echo {secret}; read go; seq 1 200000; echo done", "background": True}, ctx
    )
    assert secret not in out.content and "[redacted]" in out.content
    assert not (await send.run({"id": "bg1", "text": "go"}, ctx)).is_error
    read = await output.run({"id": "bg1", "wait": 60}, ctx)
    assert secret not in read.content and "done" in read.content
    assert re.search(r"of earlier output not shown; the first 2\.0MB are in .*kgent-bash-", read.content)
    path = commands.get("bg1").log.spill.path
    assert path is not None
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"  # the raw log, ours alone


async def test_without_a_manager_it_says_so(ctx: ToolContext) -> None:
    out = await bash.run({"command": "sleep 1", "background": True}, ctx)
    assert out.is_error and "not available" in out.content


async def test_first_output_does_not_wait_for_the_command(bg) -> None:  # type: ignore[no-untyped-def]
    ctx, _ = bg
    task = asyncio.ensure_future(bash.run({"command": "echo up; sleep 300", "background": True}, ctx))
    done, _ = await asyncio.wait({task}, timeout=60)
    assert done and "up" in task.result().content
