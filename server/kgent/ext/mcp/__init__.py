"""MCP servers as tools, on the official `mcp` SDK: connections (started lazily, restarted after a crash, closed with
the host), their tools as `mcp__<server>__<tool>`, and results mapped to tool results.

Names load lazily: a host without MCP servers never imports the SDK (its import costs more than Kgent's start-up).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "McpManager": "kgent.ext.mcp.manager",
    "McpTool": "kgent.ext.mcp.tool",
    "tool_name": "kgent.ext.mcp.tool",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kgent.ext.mcp' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
