"""The tool set: fresh instances, protocol conformance, schemas closed to extra properties, lookup by name."""

from __future__ import annotations

from kgent.tools import CODING_TOOLS, READ_ONLY_TOOLS, tool_by_name
from kgent.tools.base import Tool


def test_coding_tools_are_fresh_and_complete() -> None:
    tools = CODING_TOOLS()
    assert [t.name for t in tools] == [
        "read",
        "write",
        "edit",
        "bash",
        "grep",
        "find",
        "ls",
        "calculator",
        "web_fetch",
        "todo_write",
        "task",
        "bash_output",
        "bash_input",
        "bash_stop",
    ]
    assert all(a is not b for a, b in zip(tools, CODING_TOOLS(), strict=True))
    for tool in tools:
        assert isinstance(tool, Tool)
        assert tool.parameters["type"] == "object"
        assert tool.parameters["additionalProperties"] is False
        assert set(tool.parameters.get("required", [])) <= set(tool.parameters["properties"])
        assert tool.description and tool.kind in ("read", "edit", "execute", "search", "think", "fetch")


def test_read_only_tools() -> None:
    tools = READ_ONLY_TOOLS()
    assert {t.name for t in tools} == {"read", "grep", "find", "ls", "calculator"}
    assert all(t.read_only for t in tools)
    assert not any(t.read_only for t in CODING_TOOLS() if t.name in ("write", "edit", "bash"))


def test_tool_by_name() -> None:
    assert tool_by_name("edit").name == "edit"
    try:
        tool_by_name("nope")
    except KeyError:
        pass
    else:
        raise AssertionError("unknown tool name must raise KeyError")
