"""MCP servers as tools against real servers: mcp-server-time from PyPI, and kgent.testing.mcp_server for the failure
paths (crash mid-call, a cancelled slow call, a malformed result, list_changed, images, truncation)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kgent.ext.config import McpServerConfig
from kgent.ext.mcp import McpManager
from kgent.tools.base import ToolContext
from kgent.tools.ops import LocalFileOps


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
    for _ in range(100):  # the notification arrives on its own
        names = {t.name for t in await manager.tools_for([server])}
        if "mcp__t__grown" in names:
            break
        await asyncio.sleep(0.1)
    assert "mcp__t__grown" in names

    slow = asyncio.create_task(tools["slow"].run({}, ctx))
    for _ in range(600):
        if (tmp_path / "slow.started").exists():
            break
        await asyncio.sleep(0.05)
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow
    for _ in range(600):  # the cancel reaches the server
        if (tmp_path / "slow.cancelled").exists():
            break
        await asyncio.sleep(0.05)
    assert (tmp_path / "slow.cancelled").exists()


async def test_a_server_that_cannot_start_is_left_out_with_its_error(manager: McpManager) -> None:
    server = _stdio("nope", "/nonexistent/mcp-server")
    assert await manager.tools_for([server]) == []
    [status] = manager.status()
    assert status["name"] == "nope" and "failed to start" in status["error"]
