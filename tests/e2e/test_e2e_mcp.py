"""MCP end to end: the stdio daemon (a subprocess) runs a project's `.mcp.json` server — the real `mcp-server-git`
from PyPI — and the scripted model's `mcp__git__git_log` call is asked, approved by the host, and answered; an
untrusted project runs none; `kgent acp` runs the MCP servers an ACP client names in `session/new`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp import schema as S
from kgent_host import daemon_env

from kgent.testing.daemon_client import DaemonClient

BIN = Path(sys.executable).parent


def _git_project(root: Path) -> Path:
    project = root / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(project),
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=Tester",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "the commit mcp-server-git reports",
        ],
        check=True,
    )
    server = {"command": str(BIN / "mcp-server-git"), "args": ["--repository", str(project)]}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"git": server}}))
    return project.resolve()


def _servers_of(project: Path) -> list[int]:
    """Pids of live processes whose command line names `project` (the MCP servers started for it)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"mcp-server-git" in cmd and str(project).encode() in cmd:
                pids.append(int(entry.name))
    return pids


async def test_mcp_server_git_answers_git_log_through_the_daemon_with_an_approval(tmp_path: Path) -> None:
    project = _git_project(tmp_path)
    script = tmp_path / "gitlog.json"
    call = {"tool": "mcp__git__git_log", "args": {"repo_path": str(project), "max_count": 3}}
    script.write_text(json.dumps({"turns": [[call], [{"text": "Here is the log."}]]}))
    env = {
        **os.environ,
        "KGENT_STATE_DIR": str(tmp_path / "state"),
        "KGENT_CONFIG_DIR": str(tmp_path / "config"),
        "KGENT_PROVIDER": "scripted",
    }
    client = await DaemonClient.spawn(env=env, cwd=str(project))
    events: list[dict[str, Any]] = []
    asked: list[dict[str, Any]] = []
    ended = asyncio.Event()

    def on_event(method: str, params: Any) -> None:
        if method == "agent/event":
            events.append(params["event"])
            if params["event"]["type"] == "run_end":
                ended.set()

    async def approve(params: Any) -> Any:
        asked.append(params)
        return {"outcome": "selected", "optionId": "allow_once"}

    client.on_notification = on_event
    client.on_request["agent/permission"] = approve
    try:
        init = await client.request(
            "initialize",
            {"protocolVersion": 1, "settings": {"trustProjectExtensions": True, "model": str(script)}},
        )
        listing = init["capabilities"]["extensions"]
        assert listing["project"] == {"root": str(project), "trusted": True, "needsTrust": True}
        assert [(s["name"], s["source"], s["status"]) for s in listing["mcpServers"]] == [
            ("git", "project", "not started")
        ]
        await client.request("agent/run", {"prompt": "show the log", "workspace": str(project)})
        await asyncio.wait_for(ended.wait(), 120)
        assert len(asked) == 1
        tool_call = asked[0]["toolCall"]
        assert tool_call["name"] == "mcp__git__git_log"
        assert "the server says it only reads (a hint, not checked)" in tool_call["title"]
        done = [e for e in events if e["type"] == "tool_update" and e["status"] == "completed"]
        assert len(done) == 1 and "the commit mcp-server-git reports" in done[0]["output"]
        assert events[-1]["status"] == "settled"
        assert _servers_of(project), "the MCP server runs while the daemon does"
        await client.request("shutdown")
    finally:
        code = await client.close(within=30)
    assert code == 0
    for _ in range(100):  # stopped with the daemon
        if not _servers_of(project):
            break
        await asyncio.sleep(0.1)
    assert _servers_of(project) == []
    assert b"Traceback" not in client.stderr, client.stderr.decode(errors="replace")


async def test_an_untrusted_project_lists_its_servers_and_runs_none(tmp_path: Path) -> None:
    project = _git_project(tmp_path)
    script = tmp_path / "gitlog.json"
    call = {"tool": "mcp__git__git_log", "args": {"repo_path": str(project)}}
    script.write_text(json.dumps({"turns": [[call], [{"text": "no log"}]]}))
    env = {
        **os.environ,
        "KGENT_STATE_DIR": str(tmp_path / "state"),
        "KGENT_CONFIG_DIR": str(tmp_path / "config"),
        "KGENT_PROVIDER": "scripted",
    }
    client = await DaemonClient.spawn(env=env, cwd=str(project))
    events: list[dict[str, Any]] = []
    ended = asyncio.Event()

    def on_event(method: str, params: Any) -> None:
        if method == "agent/event":
            events.append(params["event"])
            if params["event"]["type"] == "run_end":
                ended.set()

    client.on_notification = on_event
    try:
        init = await client.request("initialize", {"protocolVersion": 1, "settings": {"model": str(script)}})
        listing = init["capabilities"]["extensions"]
        assert listing["project"] == {"root": str(project), "trusted": False, "needsTrust": True}
        assert [s["status"] for s in listing["mcpServers"]] == ["untrusted"]
        await client.request("agent/run", {"prompt": "log", "workspace": str(project)})
        await asyncio.wait_for(ended.wait(), 60)
    finally:
        assert await client.close(within=30) == 0
    failed = [e["output"] for e in events if e["type"] == "tool_update" and e["status"] == "failed"]
    assert failed == ["Unknown tool: mcp__git__git_log"]
    assert _servers_of(project) == []


class _AcpClient:
    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.asked: list[Any] = []

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        self.asked.append(tool_call)
        return S.RequestPermissionResponse(
            outcome=S.AllowedOutcome(outcome="selected", option_id="allow_once")
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


async def test_an_acp_client_s_session_mcp_servers_become_tools(tmp_path: Path) -> None:
    script = tmp_path / "echo.json"
    call = {"tool": "mcp__kit__echo", "args": {"text": "from zed"}}
    script.write_text(json.dumps({"turns": [[call], [{"text": "echoed"}]]}))
    ws = tmp_path / "ws"
    ws.mkdir()
    env = daemon_env(str(tmp_path / "state"), KGENT_MODEL=str(script))
    kit = S.McpServerStdio(
        name="kit", command=sys.executable, args=["-m", "kgent.testing.mcp_server", str(tmp_path)], env=[]
    )
    client = _AcpClient()
    async with spawn_agent_process(client, sys.executable, "-m", "kgent", "acp", env=env) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.agent_capabilities is not None and init.agent_capabilities.mcp_capabilities is not None
        assert init.agent_capabilities.mcp_capabilities.http
        session = await conn.new_session(cwd=str(ws), mcp_servers=[kit])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("echo")])
        with pytest.raises(RequestError):  # SSE servers are not spoken: said at once
            sse = S.SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[])
            await conn.new_session(cwd=str(ws), mcp_servers=[sse])
    assert done.stop_reason == "end_turn"
    assert len(client.asked) == 1  # asked like a network call (ask mode)
    ends = [u for u in client.updates if u.session_update == "tool_call_update" and u.status == "completed"]
    assert len(ends) == 1 and "echo: from zed" in json.dumps(ends[0].model_dump(mode="json"))
