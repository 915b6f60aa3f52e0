"""Background commands over the daemon, as a user meets them: a scripted model starts `python3 -m http.server` in
the background (asked, inside the sandbox, on the host's network), fetches a page from it with a later command,
reads its log and stops it; `background` events say each state; agent/background lists and stops them; a cancelled
run leaves them running unless asked, and `kill -9` of the daemon then leaves no process (found in /proc by a
per-test marker)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
from pathlib import Path
from typing import Any

from kgent_host import KgentHost, check_stream
from test_e2e_orphans import until

from conftest import Spawn
from helpers import processes_with


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def script(tmp_path: Path, turns: list[list[dict[str, Any]]]) -> str:
    path = tmp_path / f"script-{secrets.token_hex(4)}.json"
    path.write_text(json.dumps(turns))
    return str(path)


def results(host: KgentHost, run_id: str) -> dict[str, dict[str, Any]]:
    """The last tool_update of each call, by the call's tool name and index: {"bash#0": update, ...}."""
    names = {c["toolCallId"]: c["name"] for c in host.of(run_id, "tool_call")}
    seen: dict[str, int] = {}
    out: dict[str, dict[str, Any]] = {}
    order = list(dict.fromkeys(c["toolCallId"] for c in host.of(run_id, "tool_call")))
    last = {u["toolCallId"]: u for u in host.of(run_id, "tool_update")}
    for call in order:
        name = names[call]
        out[f"{name}#{seen.get(name, 0)}"] = last[call]
        seen[name] = seen.get(name, 0) + 1
    return out


async def test_a_dev_server_in_the_background(host: KgentHost, workspace: Path, tmp_path: Path) -> None:
    (workspace / "hello.txt").write_text("hello from the workspace\n")
    port = free_port()
    model = script(
        tmp_path,
        [
            [
                {"text": "Starting the server."},
                {
                    "tool": "bash",
                    "args": {
                        "command": f"python3 -u -m http.server {port} --bind 127.0.0.1",
                        "background": True,
                    },
                },
            ],
            [{"tool": "bash_output", "args": {"id": "bg1", "until": "Serving HTTP"}}],
            [{"tool": "bash", "args": {"command": f"curl -s http://127.0.0.1:{port}/hello.txt"}}],
            [{"tool": "bash_output", "args": {"id": "bg1", "until": "GET /hello.txt"}}],
            [{"tool": "bash_stop", "args": {"id": "bg1"}}],
            [{"text": "The page is served."}],
        ],
    )
    run_id, end, _ = await host.run_to_end(
        prompt="Serve it", workspace=str(workspace), model=model, mode="ask"
    )
    assert end["status"] == "settled", end
    asked = host.permission_requests[0]
    assert "keeps running" in asked["toolCall"]["title"] and asked["operation"] == "network", asked
    assert "on the host's network" in asked["reason"]
    done = results(host, run_id)
    started = done["bash#0"]
    assert started["details"]["backgroundId"] == "bg1" and "bwrap" in started["details"]["sandbox"]
    assert (
        "Serving HTTP" in started["output"] + done["bash_output#0"]["output"]
    )  # first output, or the wait's
    assert "hello from the workspace" in done["bash#1"]["output"]
    assert "GET /hello.txt" in done["bash_output#1"]["output"]
    assert "bg1 was stopped" in done["bash_stop#0"]["output"]
    states = [(e["id"], e["state"]) for e in host.of(run_id, "background")]
    assert states == [("bg1", "running"), ("bg1", "stopped")], states
    assert host.of(run_id, "background")[0]["toolCallId"] == host.of(run_id, "tool_call")[0]["toolCallId"]
    listed = await host.call("agent/background", {"sessionId": end["sessionId"]})
    assert listed == {"commands": []}  # the run ended: its session keeps none


def sleeper(tmp_path: Path, marker: str) -> str:
    """A run that starts `sleep MARKER` in the background, then blocks in a foreground command."""
    return script(
        tmp_path,
        [
            [{"tool": "bash", "args": {"command": f"sleep {marker}", "background": True}}],
            [{"tool": "bash", "args": {"command": "echo $$ > fg.pid; sleep 120"}}],
            [{"text": "never"}],
        ],
    )


async def test_a_cancel_keeps_them_unless_asked_and_kill_9_leaves_none(
    spawn: Spawn, workspace: Path, tmp_path: Path
) -> None:
    marker = f"1000.{secrets.randbelow(10**6):06d}"
    host = await spawn()
    run_id, session_id = await host.start_run(
        prompt="Sleep", workspace=str(workspace), model=sleeper(tmp_path, marker), mode="full"
    )
    await host.wait_for(lambda: (workspace / "fg.pid").is_file(), what="the foreground command")
    assert processes_with(marker)
    assert await host.call("agent/cancel", {"runId": run_id}) == {"cancelled": True}
    end = await host.wait_end(run_id)
    check_stream(host, run_id)
    assert end["status"] == "cancelled"
    assert processes_with(marker), "a cancel that did not ask stopped the background command"
    listed = await host.call("agent/background", {"sessionId": session_id})
    assert [(c["id"], c["state"]) for c in listed["commands"]] == [("bg1", "running")]
    os.kill(host.pid, signal.SIGKILL)
    assert await host.wait_exit() == -signal.SIGKILL
    assert await until(lambda: not processes_with(marker)), f"orphans after kill -9: {processes_with(marker)}"


async def test_cancel_with_stop_background_and_agent_background_stop(
    host: KgentHost, workspace: Path, tmp_path: Path
) -> None:
    marker = f"1000.{secrets.randbelow(10**6):06d}"
    run_id, session_id = await host.start_run(
        prompt="Sleep", workspace=str(workspace), model=sleeper(tmp_path, marker), mode="full"
    )
    await host.wait_for(lambda: (workspace / "fg.pid").is_file(), what="the foreground command")
    cancel = await host.call("agent/cancel", {"runId": run_id, "stopBackground": True})
    assert cancel == {"cancelled": True}
    await host.wait_end(run_id)
    check_stream(host, run_id)
    assert not processes_with(marker), "stopBackground left the command running"
    assert [e["state"] for e in host.of(run_id, "background")] == ["running", "stopped"]
    # A second session's command, kept by a plain cancel, stopped through agent/background.
    (workspace / "fg.pid").unlink()
    run2, session2 = await host.start_run(
        prompt="Sleep", workspace=str(workspace), model=sleeper(tmp_path, marker), mode="full"
    )
    await host.wait_for(lambda: (workspace / "fg.pid").is_file(), what="the foreground command")
    await host.call("agent/cancel", {"runId": run2})
    await host.wait_end(run2)
    assert processes_with(marker)
    stopped = await host.call("agent/background", {"sessionId": session2, "stop": "bg1"})
    assert [(c["id"], c["state"]) for c in stopped["commands"]] == [("bg1", "stopped")]
    assert not processes_with(marker)
