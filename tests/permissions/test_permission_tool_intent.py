"""The policy classifies a call from the intent its tool declares: a user's tool is judged like a built-in one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from helpers import collect
from kgent.core.events import PermissionRequest, PermissionResolved
from kgent.kernel import AgentKernel, KernelConfig
from kgent.permissions import classify
from kgent.providers.scripted import ScriptedProvider
from kgent.tools import CODING_TOOLS, tool_by_name
from kgent.tools.base import CallDescription, FileChangePreview, ToolContext, ToolIntent, ToolOutput


@dataclass
class NoteTool:
    """A user's tool that appends a line to the file named by its `file` argument."""

    name: str = "note"
    description: str = "Append a line to a file."
    parameters: dict[str, Any] = field(
        default_factory=lambda: {
            "type": "object",
            "properties": {"file": {"type": "string"}, "line": {"type": "string"}},
            "required": ["file", "line"],
        }
    )
    kind: Any = "edit"
    read_only: bool = False
    intent: Any = ToolIntent(effect="write", path_arg="file", verb="notes in")

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        return CallDescription(title=f"note in {args.get('file')}", path=args.get("file"))

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        target = ctx.workspace / args["file"]
        with target.open("a") as f:
            f.write(args["line"] + "\n")
        return ToolOutput(content="noted")


def test_every_builtin_tool_declares_its_intent() -> None:
    for tool in CODING_TOOLS():
        assert isinstance(tool.intent, ToolIntent), tool.name
        assert tool.intent.path_arg is None or tool.intent.path_arg in tool.parameters["properties"], (
            tool.name
        )
        assert tool.intent.command_arg is None or tool.intent.command_arg in tool.parameters["properties"]


def test_a_user_tool_is_classified_like_a_builtin(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    ws = tmp_path / "ws"
    mine = classify(NoteTool(), {"file": "a.txt", "line": "x"}, ws)
    builtin = classify(tool_by_name("write"), {"path": "a.txt", "content": "x"}, ws)
    assert (mine.operation, mine.scope, mine.paths, mine.subject) == (
        builtin.operation,
        builtin.scope,
        builtin.paths,
        builtin.subject,
    )
    assert mine.reason == "notes in a.txt"
    outside = classify(NoteTool(), {"file": "../x.txt", "line": "x"}, ws)
    assert (outside.operation, outside.scope) == ("write", "outside")
    protected = classify(NoteTool(), {"file": ".env", "line": "x"}, ws)
    assert protected.protected


@pytest.mark.parametrize(
    ("intent", "operation", "scope"),
    [
        (ToolIntent(effect="read", path_arg="p", default_path="."), "read", "workspace"),
        (ToolIntent(effect="think"), "read", "workspace"),
        (ToolIntent(effect="network"), "network", "outside"),
        (ToolIntent(effect="execute", command_arg="cmd"), "unknown", "workspace"),  # no command given
        (None, "unknown", "workspace"),  # declares nothing: never trusted
    ],
)
def test_declared_effects(tmp_path: Path, intent: ToolIntent | None, operation: str, scope: str) -> None:
    tool = NoteTool(name="custom", intent=intent)
    got = classify(tool, {}, tmp_path)
    assert (got.operation, got.scope) == (operation, scope)


def test_a_user_execute_tool_gets_the_command_classifier(tmp_path: Path) -> None:
    tool = NoteTool(name="sh", intent=ToolIntent(effect="execute", command_arg="cmd"))
    assert classify(tool, {"cmd": "rm -rf /"}, tmp_path).operation == "shell"
    assert classify(tool, {"cmd": "curl https://example.com"}, tmp_path).operation == "network"


async def test_plan_mode_denies_a_user_write_tool_and_auto_runs_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = [[{"tool": "note", "args": {"file": "notes.txt", "line": "hello"}}], [{"text": "done"}]]
    for mode, expected in (("plan", False), ("auto", True)):
        kernel = AgentKernel(ScriptedProvider(script), tools=[NoteTool()], config=KernelConfig(mode=mode))
        run = kernel.create_run("note it", workspace=ws)
        events = await collect(
            run, lambda r, mode=mode: pytest.fail(f"{mode} mode must not ask for a workspace write")
        )
        assert not [e for e in events if isinstance(e, PermissionRequest)]
        resolved = [e for e in events if isinstance(e, PermissionResolved)]
        assert [r.approved for r in resolved] == ([] if expected else [False]), mode
        assert (ws / "notes.txt").exists() is expected, mode
        await kernel.aclose()
