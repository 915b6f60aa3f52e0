"""The MCP servers an ACP client names in `session/new` / `session/load`, as kgent.ext MCP server configs (stdio and
streamable HTTP; the client chose them, so they run without a project trust question)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp import RequestError
from acp import schema as S

from kgent.ext.config import McpServerConfig

SOURCE = "ACP session"


def session_servers(raw: Sequence[Any] | None) -> list[McpServerConfig]:
    """Configs for `raw`; RequestError (invalid params) for a kind Kgent does not speak (sse, acp)."""
    out: list[McpServerConfig] = []
    for server in raw or ():
        if isinstance(server, S.McpServerStdio):
            out.append(
                McpServerConfig(
                    name=server.name,
                    origin="user",
                    file=SOURCE,
                    transport="stdio",
                    command=server.command,
                    args=tuple(server.args),
                    env={e.name: e.value for e in server.env},
                )
            )
        elif isinstance(server, S.HttpMcpServer):
            out.append(
                McpServerConfig(
                    name=server.name,
                    origin="user",
                    file=SOURCE,
                    transport="http",
                    url=server.url,
                    headers={h.name: h.value for h in server.headers},
                )
            )
        else:
            kind = getattr(server, "type", type(server).__name__)
            raise RequestError.invalid_params(
                {"mcpServers": f"MCP servers of type {kind!r} are not supported"}
            )
    return out
