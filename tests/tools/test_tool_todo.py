"""todo_write: the whole plan every call, validated item by item, announced as a `plan` event."""

from __future__ import annotations

from typing import Any

import pytest

from kgent.core.events import PlanEntry, PlanEvent
from kgent.core.messages import ToolResultMessage, message_to_dict
from kgent.permissions import classify, decide
from kgent.tools.todo import TodoWriteTool, latest_plan
from toolctx import MakeCtx


async def test_a_plan_replaces_the_last_and_is_announced(make_ctx: MakeCtx) -> None:
    seen: list[Any] = []
    tool = TodoWriteTool()
    todos = [
        {"content": "Read the code", "status": "completed"},
        {"content": " Fix the bug ", "status": "in_progress", "priority": "high"},
        {"content": "Run the tests", "status": "pending", "priority": "low"},
    ]
    out = await tool.run({"todos": todos}, make_ctx(emit=seen.append))
    assert not out.is_error
    assert out.content.splitlines() == [
        "Plan updated: 3 item(s), 1 completed, 1 in progress.",
        "[x] Read the code",
        "[~] Fix the bug",
        "[ ] Run the tests",
    ]
    assert seen == [
        PlanEvent(
            entries=(
                PlanEntry(content="Read the code", status="completed"),
                PlanEntry(content="Fix the bug", status="in_progress", priority="high"),
                PlanEntry(content="Run the tests", status="pending", priority="low"),
            )
        )
    ]
    assert out.details["plan"][1] == {"content": "Fix the bug", "status": "in_progress", "priority": "high"}
    empty = await tool.run({"todos": []}, make_ctx(emit=seen.append))
    assert empty.content == "The plan is now empty." and seen[-1] == PlanEvent(entries=())


@pytest.mark.parametrize(
    ("todos", "problem"),
    [
        ("a list please", "'todos' must be an array"),
        (["x"], "todos[0] must be an object"),
        ([{"content": "", "status": "pending"}], "todos[0].content must be a non-empty string"),
        (
            [{"content": "a", "status": "done"}],
            "todos[0].status must be one of pending, in_progress, completed",
        ),
        ([{"content": "a", "status": "pending", "priority": "urgent"}], "todos[0].priority must be one of"),
        ([{"content": "a", "status": "pending"}] * 51, "at most 50 items"),
    ],
)
async def test_a_bad_plan_is_an_error_and_announces_nothing(
    make_ctx: MakeCtx, todos: Any, problem: str
) -> None:
    seen: list[Any] = []
    out = await TodoWriteTool().run({"todos": todos}, make_ctx(emit=seen.append))
    assert out.is_error and problem in out.content
    assert seen == []


def test_planning_is_never_asked(make_ctx: MakeCtx) -> None:
    intent = classify(TodoWriteTool(), {"todos": []}, make_ctx().workspace)
    assert intent.operation == "read" and intent.scope == "workspace"
    for mode in ("plan", "ask", "auto"):
        assert decide(mode, intent, sandboxed=False).action == "allow"


def test_the_plan_of_a_branch_is_its_latest_successful_result() -> None:
    def result(plan: Any, is_error: bool = False, name: str = "todo_write") -> dict[str, Any]:
        details = {"plan": plan} if plan is not None else {}
        return message_to_dict(
            ToolResultMessage(tool_call_id="c", name=name, content="", is_error=is_error, details=details)
        )

    one = [{"content": "a", "status": "pending", "priority": "medium"}]
    two = [{"content": "a", "status": "completed", "priority": "medium"}]
    assert latest_plan([]) is None
    assert latest_plan([result(one)]) == (PlanEntry(content="a", status="pending"),)
    history = [result(one), result(two), result(None, is_error=True), result(one, name="other")]
    assert latest_plan(history) == (PlanEntry(content="a", status="completed"),)
