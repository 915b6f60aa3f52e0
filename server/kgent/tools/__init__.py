# Concept: the coding tool set — fresh instances of the built-in tools, looked up by name, plus re-exports.
"""Kgent's built-in coding tools. Submodules load on first use, so importing the package costs nothing."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgent.tools.base import Tool

_EXPORTS = {
    "Tool": "base",
    "ToolContext": "base",
    "ToolOutput": "base",
    "CallDescription": "base",
    "FileChangePreview": "base",
    "TruncationResult": "truncate",
    "truncate_head": "truncate",
    "truncate_tail": "truncate",
    "ReadTool": "read",
    "WriteTool": "write",
    "EditTool": "edit",
    "BashTool": "bash",
    "GrepTool": "grep",
    "FindTool": "find",
    "LsTool": "ls",
    "CalculatorTool": "calculator",
    "WebFetchTool": "web_fetch",
    "TodoWriteTool": "todo",
    "TaskTool": "task",
    "BashOutputTool": "bgtools",
    "BashInputTool": "bgtools",
    "BashStopTool": "bgtools",
}
_CODING = (
    "ReadTool",
    "WriteTool",
    "EditTool",
    "BashTool",
    "GrepTool",
    "FindTool",
    "LsTool",
    "CalculatorTool",
    "WebFetchTool",
    "TodoWriteTool",
    "TaskTool",
    "BashOutputTool",
    "BashInputTool",
    "BashStopTool",
)
_READ_ONLY = ("ReadTool", "GrepTool", "FindTool", "LsTool", "CalculatorTool")

__all__ = ["CODING_TOOLS", "READ_ONLY_TOOLS", "tool_by_name", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kgent.tools' has no attribute {name!r}")
    return getattr(importlib.import_module(f"kgent.tools.{module}"), name)


def _make(names: tuple[str, ...]) -> tuple[Tool, ...]:
    return tuple(__getattr__(n)() for n in names)


def CODING_TOOLS() -> tuple[Tool, ...]:  # noqa: N802 - the kernel's established name
    """Fresh instances of read, write, edit, bash, grep, find, ls, calculator, web_fetch, todo_write, task and the
    background commands' bash_output, bash_input and bash_stop."""
    return _make(_CODING)


def READ_ONLY_TOOLS() -> tuple[Tool, ...]:  # noqa: N802
    """Fresh instances of the tools that never change anything: read, grep, find, ls, calculator."""
    return _make(_READ_ONLY)


def tool_by_name(name: str) -> Tool:
    """A fresh instance of the built-in tool called `name`; KeyError when there is none."""
    for tool in CODING_TOOLS():
        if tool.name == name:
            return tool
    raise KeyError(name)
