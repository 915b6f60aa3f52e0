"""Cancellation and endings over the wire: agent/cancel (a long bash, a pending approval), approval timeouts,
shutdown, exit and stdin EOF — runs end cancelled, prompts are withdrawn, process groups die, sessions persist."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from kgent_host import PATIENCE, KgentHost, check_stream
from pygls.exceptions import JsonRpcException

# Ending a run blocked in a command takes the daemon well under a few seconds (2 s of grace at most); the bound is
# loose for a loaded machine, and still far from the command's 120 s.
PROMPTLY = 20.0


def long_bash_script(tmp_path: Path) -> str:
    path = tmp_path / "long-bash.json"
    turns = [
        [{"text": "Running a long command."}, {"tool": "bash", "args": {"command": "echo $$ > bash.pid; sleep 120; echo finished"}}],
        [{"text": "The long command finished."}],
    ]
    path.write_text(json.dumps(turns))
    return str(path)


async def start_long_bash(host: KgentHost, workspace: Path, tmp_path: Path) -> tuple[str, str, int]:
    """A run blocked in `sleep 120` (mode full: no prompt); (runId, sessionId, the command's process group)."""
    run_id, session_id = await host.start_run(
        prompt="Run it", workspace=str(workspace), model=long_bash_script(tmp_path), mode="full"
    )
    pid_file = workspace / "bash.pid"
    await host.wait_for(lambda: pid_file.is_file() and pid_file.read_text().strip(), what="the bash pid")
    return run_id, session_id, int(pid_file.read_text())


async def group_gone(pgid: int, within: float = PATIENCE) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        await asyncio.sleep(0.02)
    return False


async def test_cancel_during_a_long_bash(host: KgentHost, workspace: Path, tmp_path: Path) -> None:
    run_id, session_id, pgid = await start_long_bash(host, workspace, tmp_path)
    started = time.monotonic()
    assert await host.call("agent/cancel", {"runId": run_id}) == {"cancelled": True}
    end = await host.wait_end(run_id)
    assert time.monotonic() - started < PROMPTLY
    check_stream(host, run_id)
    assert end["status"] == "cancelled" and end["stopReason"] == "cancelled"
    assert await group_gone(pgid), "the bash process group outlived the cancel"
    call = host.of(run_id, "tool_call")[0]["toolCallId"]
    last = [u for u in host.of(run_id, "tool_update") if u["toolCallId"] == call][-1]
    assert last["status"] == "failed" and last["isError"]
    # Cancelling again is harmless; the session goes on, and remembers the cancelled call.
    assert await host.call("agent/cancel", {"runId": run_id}) == {"cancelled": False}
    _, end2, _ = await host.run_to_end(prompt="Still there?", sessionId=session_id, model="hello")
    assert end2["status"] == "settled" and end2["sessionId"] == session_id
    session = await host.call("agent/session", {"sessionId": session_id})
    tools = [e["message"] for e in session["entries"] if e["type"] == "message" and e["message"]["role"] == "tool"]
    assert tools and tools[0]["content"].startswith("cancelled")
    with pytest.raises(JsonRpcException) as unknown:
        await host.call("agent/cancel", {"runId": "run-000000000000"})
    assert unknown.value.code == -32002 and unknown.value.data["code"] == "run_not_found"


async def test_cancel_while_an_approval_is_pending_withdraws_it(host: KgentHost, workspace: Path) -> None:
    forever: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    host.policy = lambda params: forever
    run_id, _ = await host.start_run(prompt="Set value to 2", workspace=str(workspace), model="tool-loop")
    request = await host.wait_for(lambda: host.permission_requests and host.permission_requests[0], what="a prompt")
    rid = request["requestId"]
    assert await host.call("agent/cancel", {"runId": run_id}, msg_id="cancel-1") == {"cancelled": True}
    end = await host.wait_end(run_id)
    check_stream(host, run_id)
    assert end["status"] == "cancelled"
    assert host.withdrawn == [rid]
    # The withdrawal came before the cancel's answer, and before run_end.
    withdrawal = host.wire.index(("withdraw", rid))
    assert withdrawal < host.wire.index(("response", "cancel-1"))
    assert withdrawal < host.wire.index(("event", run_id, len(host.events[run_id]) - 1))
    assert (workspace / "sample.py").read_text() == "value = 1\nprint(value)\n"


async def test_approval_timeout_withdraws_and_rejects(spawn: Any, workspace: Path) -> None:
    h = await spawn(initialize=False)
    init = await h.initialize(approvalTimeout=0.3)
    assert init["capabilities"]["features"]["approvalTimeout"] == 0.3
    h.policy = lambda params: asyncio.get_running_loop().create_future()  # never answered
    run_id, end, _ = await h.run_to_end(prompt="Set value to 2", workspace=str(workspace), model="tool-loop")
    assert end["status"] == "settled"
    asked = [r["requestId"] for r in h.permission_requests]
    assert len(asked) == 2 and h.withdrawn == asked
    resolved = h.of(run_id, "permission_resolved")
    assert [(r["source"], r["approved"]) for r in resolved] == [("timeout", False), ("timeout", False)]
    for rid in asked:  # each withdrawal precedes its permission_resolved event
        event = next(p for p in h.events[run_id] if p["event"]["type"] == "permission_resolved" and p["event"]["requestId"] == rid)
        assert h.wire.index(("withdraw", rid)) < h.wire.index(("event", run_id, event["seq"]))
    denied = [u for u in h.of(run_id, "tool_update") if u["status"] == "failed"]
    assert all("timed out" in u["output"] for u in denied)


async def test_exit_mid_run_cancels_kills_and_persists(spawn: Any, workspace: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    h = await spawn(state_dir=state)
    run_id, session_id, pgid = await start_long_bash(h, workspace, tmp_path)
    started = time.monotonic()
    h.protocol.notify("exit")
    assert await h.wait_exit() == 0
    assert time.monotonic() - started < PROMPTLY
    assert await group_gone(pgid)
    check_stream(h, run_id, ended=False)
    # A new daemon finds the session, with the cancelled call's result written.
    h2 = await spawn(state_dir=state)
    session = await h2.call("agent/session", {"sessionId": session_id})
    tools = [e["message"] for e in session["entries"] if e["type"] == "message" and e["message"]["role"] == "tool"]
    assert tools and tools[0]["content"].startswith("cancelled")
    assert session["liveRunId"] is None


async def test_stdin_eof_ends_everything(spawn: Any, workspace: Path, tmp_path: Path) -> None:
    h = await spawn()
    _, _, pgid = await start_long_bash(h, workspace, tmp_path)
    started = time.monotonic()
    assert h._server is not None and h._server.stdin is not None
    h._server.stdin.close()
    assert await h.wait_exit() == 0
    assert time.monotonic() - started < PROMPTLY
    assert await group_gone(pgid)


async def test_shutdown_cancels_runs_then_refuses_work(spawn: Any, workspace: Path, tmp_path: Path) -> None:
    h = await spawn()
    run_id, _, pgid = await start_long_bash(h, workspace, tmp_path)
    assert await h.call("shutdown") is None
    # shutdown answered after the run ended: its run_end is already here.
    assert h.of(run_id)[-1]["type"] == "run_end" and h.of(run_id)[-1]["status"] == "cancelled"
    assert await group_gone(pgid)
    with pytest.raises(JsonRpcException) as refused:
        await h.call("agent/sessions", {"workspace": str(workspace)})
    assert refused.value.code == -32600 and refused.value.data == {"code": "shutting_down"}
    assert await h.exit() == 0


async def test_sigterm_ends_everything(spawn: Any, workspace: Path, tmp_path: Path) -> None:
    import signal

    h = await spawn()
    run_id, _, pgid = await start_long_bash(h, workspace, tmp_path)
    os.kill(h.pid, signal.SIGTERM)
    assert await h.wait_exit() == 0
    assert await group_gone(pgid)
    check_stream(h, run_id, ended=False)


async def test_a_run_cancelled_before_it_started_leaves_a_usable_session(host: KgentHost, workspace: Path) -> None:
    """Cancelled right after `agent/run` answers, a run may end before it wrote its new session; the sessionId the
    client was given must still work (protocol.md: the session stays usable)."""
    for i in range(6):
        run_id, session_id = await host.start_run(prompt=f"Hello {i}", workspace=str(workspace))
        assert await host.call("agent/cancel", {"runId": run_id}) in ({"cancelled": True}, {"cancelled": False})
        await host.wait_end(run_id)
        check_stream(host, run_id)
        _, end, _ = await host.run_to_end(prompt="Still there?", sessionId=session_id)
        assert end["status"] == "settled" and end["sessionId"] == session_id
