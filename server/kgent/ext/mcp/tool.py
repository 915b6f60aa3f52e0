"""McpTool: one tool of an MCP server as a kgent Tool named `mcp__<server>__<tool>`.

Every call is a network call to the permission policy (asked unless the user allowed it): what a server says of its
tool (readOnlyHint, destructiveHint) is shown to the person in the call's title, and never used as a permission.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import TYPE_CHECKING, Any

import mcp_types as types

from kgent.core.events import ToolKind
from kgent.ext.mcp.connection import ServerGone
from kgent.ext.mcp.results import to_output
from kgent.ext.tools import truncated
from kgent.tools.base import CallDescription, FileChangePreview, ToolContext, ToolIntent, ToolOutput

if TYPE_CHECKING:
    from kgent.ext.mcp.connection import McpConnection

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, with characters model APIs refuse replaced by '_' and cut to 64."""
    return _UNSAFE.sub("_", f"mcp__{server}__{tool}")[:64]


def _hint(tool: types.Tool) -> str:
    a = tool.annotations
    if a is None:
        return "the server says nothing of what it does"
    if a.read_only_hint:
        return "the server says it only reads (a hint, not checked)"
    if a.destructive_hint:
        return "the server says it may destroy data"
    return "the server says it may change things"


class McpTool:
    kind: ToolKind = "other"
    read_only = False  # the server's hints are not trusted: calls run one by one, each asked
    intent = ToolIntent(effect="network", verb="calls an MCP server tool")

    def __init__(self, connection: McpConnection, tool: types.Tool) -> None:
        self.connection = connection
        self.server = connection.name
        self.remote_name = tool.name
        self.name = tool_name(self.server, tool.name)
        self.hint = _hint(tool)
        text = (tool.description or tool.title or tool.name).strip()
        self.description = f"{text}\n(MCP server {self.server!r}, tool {tool.name!r})"
        self.parameters: dict[str, Any] = dict(tool.input_schema) or {"type": "object"}

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        shown = json.dumps(args, ensure_ascii=False, sort_keys=True)
        if len(shown) > 200:
            shown = shown[:199] + "…"
        return CallDescription(title=f"MCP {self.server}: {self.remote_name} {shown} — {self.hint}")

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        where = f"MCP server {self.server!r}, tool {self.remote_name!r}"
        try:
            result = await self.connection.call(self.remote_name, args)
        except asyncio.CancelledError:
            raise
        except ServerGone as exc:
            return ToolOutput(
                content=f"mcp_error: {where}: the server closed the connection during the call ({exc}); it is "
                "started again on the next call",
                is_error=True,
            )
        except Exception as exc:
            return ToolOutput(content=f"mcp_error: {where}: {_one_line(exc)}", is_error=True)
        return truncated(to_output(result))


def _one_line(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:500]
