"""McpManager: the connections of one host, by configuration, and the tools of the servers a workspace configures.

Servers start on first use (the first run that needs their tools), concurrently; one that fails to start is left
out of that run's tools, with its error kept for listings and logged. `aclose()` stops them all (the host's shutdown).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kgent.core.errors import ExtensionError
from kgent.ext.config import McpServerConfig
from kgent.ext.schema import check_schema
from kgent.tools.base import Tool

if TYPE_CHECKING:  # the SDK (~0.5 s to import) loads when the first server starts, not with every host
    from kgent.ext.mcp.connection import McpConnection

log = logging.getLogger("kgent.ext.mcp")


def _key(c: McpServerConfig) -> str:
    return json.dumps(
        [c.name, c.transport, c.command, list(c.args), dict(c.env), c.cwd, c.url, dict(c.headers)],
        sort_keys=True,
    )


class McpManager:
    def __init__(self) -> None:
        self._connections: dict[str, McpConnection] = {}
        self._closed = False

    def connection(self, config: McpServerConfig) -> McpConnection:
        key = _key(config)
        conn = self._connections.get(key)
        if conn is None:
            if self._closed:
                raise ExtensionError("the MCP servers were stopped (the host is shutting down)")
            from kgent.ext.mcp.connection import McpConnection

            conn = self._connections[key] = McpConnection(config)
        return conn

    async def tools_for(self, servers: Sequence[McpServerConfig]) -> list[Tool]:
        """The tools of `servers`, each started (or listed again) when needed."""
        from kgent.ext.mcp.tool import McpTool

        conns = [self.connection(s) for s in servers]
        listed = await asyncio.gather(*(c.refresh() for c in conns), return_exceptions=True)
        tools: list[Tool] = []
        for conn, result in zip(conns, listed, strict=True):
            if isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                log.warning("%s", result.message if isinstance(result, ExtensionError) else result)
                continue
            for remote in result:
                problem = check_schema(dict(remote.input_schema))
                if problem:
                    log.warning(
                        "MCP server %r: tool %r has an invalid input schema: %s",
                        conn.name,
                        remote.name,
                        problem,
                    )
                    continue
                tools.append(McpTool(conn, remote))
        return tools

    def status(self) -> list[dict[str, Any]]:
        return [
            {
                "name": c.name,
                "running": c.running,
                "starts": c.starts,
                "tools": [t.name for t in c.tools],
                "error": c.error,
            }
            for c in self._connections.values()
        ]

    async def aclose(self) -> None:
        self._closed = True
        conns, self._connections = list(self._connections.values()), {}
        await asyncio.gather(*(c.aclose() for c in conns), return_exceptions=True)
