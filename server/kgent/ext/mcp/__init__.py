"""MCP servers as tools, on the official `mcp` SDK: connections (started lazily, restarted after a crash, closed with
the host), their tools as `mcp__<server>__<tool>`, and results mapped to tool results."""

from kgent.ext.mcp.manager import McpManager
from kgent.ext.mcp.tool import McpTool, tool_name

__all__ = ["McpManager", "McpTool", "tool_name"]
