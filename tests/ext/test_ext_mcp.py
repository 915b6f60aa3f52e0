"""MCP servers as tools against real servers: mcp-server-time from PyPI, and kgent.testing.mcp_server for the failure
paths (crash mid-call, a cancelled slow call, a malformed result, list_changed, images, truncation)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helpers import eventually
from kgent.ext.config import McpServerConfig
from kgent.ext.host import Extensions
from kgent.ext.mcp import McpManager
from kgent.files.ops import LocalFileOps
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider
from kgent.tools.base import ToolContext


@pytest.fixture
async def manager() -> AsyncIterator[McpManager]:
    m = McpManager()
    yield m
    await m.aclose()


def _stdio(name: str, command: str, *args: str) -> McpServerConfig:
    return McpServerConfig(
        name=name, origin="user", file="test", transport="stdio", command=command, args=args
    )


async def test_mcp_server_time_from_pypi(manager: McpManager, tmp_path: Path) -> None:
    server = _stdio("time", str(Path(sys.executable).parent / "mcp-server-time"), "--local-timezone", "UTC")
    tools = {t.name: t for t in await manager.tools_for([server])}
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(tools)
    tool = tools["mcp__time__get_current_time"]
    assert (
        tool.intent.effect == "network" and tool.read_only is False
    )  # the server's readOnlyHint is not trusted
    out = await tool.run({"timezone": "UTC"}, ToolContext(workspace=tmp_path, fs=LocalFileOps()))
    assert not out.is_error and '"timezone": "UTC"' in out.content


async def test_failure_paths_of_an_mcp_server(manager: McpManager, tmp_path: Path) -> None:
    server = _stdio("t", sys.executable, "-m", "kgent.testing.mcp_server", str(tmp_path))
    tools = {t.name.removeprefix("mcp__t__"): t for t in await manager.tools_for([server])}
    ctx = ToolContext(workspace=tmp_path, fs=LocalFileOps())
    conn = manager.connection(server)

    crashed = await tools["crash"].run({}, ctx)
    assert crashed.is_error and crashed.content.startswith(
        "mcp_error: MCP server 't', tool 'crash': the server closed"
    )
    again = await tools["echo"].run({"text": "back"}, ctx)  # restarted by the next call
    assert (again.content, conn.starts) == ("echo: back", 2)

    bad = await tools["malformed"].run({}, ctx)
    assert bad.is_error and bad.content.startswith(
        "mcp_error: MCP server 't', tool 'malformed': ValidationError"
    )

    image = await tools["image"].run({}, ctx)
    assert (
        image.content == "[image: image/png, 70 bytes]"
        and image.details["media"][0]["mimeType"] == "image/png"
    )

    big = await tools["big"].run({}, ctx)
    assert (
        big.details["truncation"]["truncated"]
        and "[Output truncated: showing 2000 of 5000 lines" in big.content
    )

    await tools["grow"].run({}, ctx)
    # the server's tools/list_changed notification arrives on its own
    names: set[str] = set()
    for _ in range(600):
        names = {t.name for t in await manager.tools_for([server])}
        if "mcp__t__grown" in names:
            break
        await asyncio.sleep(0.05)
    assert "mcp__t__grown" in names, f"no tools/list_changed after 30 s: {sorted(names)}"


async def test_a_server_that_cannot_start_is_left_out_with_its_error(manager: McpManager) -> None:
    server = _stdio("nope", "/nonexistent/mcp-server")
    assert await manager.tools_for([server]) == []
    [status] = manager.status()
    assert status["name"] == "nope" and "failed to start" in status["error"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_streamable_http_server_gets_its_configured_headers(
    manager: McpManager, tmp_path: Path
) -> None:
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kgent.testing.mcp_server",
        str(tmp_path),
        "--http",
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        for _ in range(600):  # until it listens
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            break
        server = McpServerConfig(
            name="web",
            origin="user",
            file="test",
            transport="http",
            url=f"http://127.0.0.1:{port}/mcp",
            headers={"Authorization": "Bearer t0ken"},
        )
        tools = {t.name: t for t in await manager.tools_for([server])}
        ctx = ToolContext(workspace=tmp_path, fs=LocalFileOps())
        assert (await tools["mcp__web__echo"].run({"text": "over http"}, ctx)).content == "echo: over http"
        assert (await tools["mcp__web__whoami"].run({}, ctx)).content == "Bearer t0ken"
    finally:
        await manager.aclose()
        proc.terminate()
        await proc.wait()


async def test_cancelling_a_run_reaches_its_mcp_call(tmp_path: Path, config_dir: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    (config_dir / "config.toml").write_text(
        f"[mcp_servers.t]\ncommand = {sys.executable!r}\nargs = ['-m', 'kgent.testing.mcp_server', {str(markers)!r}]\n"
    )
    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"turns": [[{"tool": "mcp__t__slow", "args": {}}], [{"text": "never"}]]}))
    ext = Extensions()
    kernel = AgentKernel(ScriptedProvider(str(script)), config=KernelConfig(mode="full"), hooks=ext.hooks)
    ws = tmp_path / "ws"
    ws.mkdir()
    try:
        run = kernel.create_run("wait", workspace=ws)
        await eventually((markers / "slow.started").exists, "the MCP server's slow call to start", 60)
        run.cancel()
        result = await run.result()
        assert result.status == "cancelled"
        await eventually((markers / "slow.cancelled").exists, "the MCP server to see the cancellation")
    finally:
        await kernel.aclose()
        await ext.aclose()
