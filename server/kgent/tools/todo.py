# Concept: the plan tool — the agent's todo list, replaced whole by each call, announced as a `plan` event.
"""`TodoWriteTool` (`todo_write`): the model keeps its plan as a list of items with statuses. The list lives in the
session as the tool's calls and results: the latest successful result on a branch is that branch's plan
(`latest_plan`), so a resume or a fork keeps it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, get_args

from kgent.core.events import PlanEntry, PlanEvent, PlanPriority, PlanStatus, ToolKind
from kgent.tools.base import (
    CallDescription,
    FileChangePreview,
    ToolContext,
    ToolIntent,
    ToolOutput,
    error_output,
)

MAX_ITEMS = 50
MAX_CONTENT = 500
_STATUSES: tuple[str, ...] = get_args(PlanStatus)
_PRIORITIES: tuple[str, ...] = get_args(PlanPriority)
_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


class TodoError(ValueError):
    """The list the model sent is not a valid plan."""


def parse_plan(raw: Any) -> tuple[PlanEntry, ...]:
    """The plan in a `todos` argument; TodoError naming the first bad item."""
    if not isinstance(raw, list):
        raise TodoError("'todos' must be an array of {content, status, priority?} items")
    if len(raw) > MAX_ITEMS:
        raise TodoError(f"a plan holds at most {MAX_ITEMS} items, got {len(raw)}")
    entries = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise TodoError(f"todos[{i}] must be an object")
        content, status = item.get("content"), item.get("status")
        priority = item.get("priority", "medium")
        if not isinstance(content, str) or not content.strip():
            raise TodoError(f"todos[{i}].content must be a non-empty string")
        if len(content) > MAX_CONTENT:
            raise TodoError(f"todos[{i}].content is longer than {MAX_CONTENT} characters")
        if status not in _STATUSES:
            raise TodoError(f"todos[{i}].status must be one of {', '.join(_STATUSES)}, got {status!r}")
        if priority not in _PRIORITIES:
            raise TodoError(f"todos[{i}].priority must be one of {', '.join(_PRIORITIES)}, got {priority!r}")
        entries.append(PlanEntry(content=content.strip(), status=status, priority=priority))
    return tuple(entries)


def plan_to_list(entries: Iterable[PlanEntry]) -> list[dict[str, str]]:
    return [{"content": e.content, "status": e.status, "priority": e.priority} for e in entries]


def render_plan(entries: tuple[PlanEntry, ...]) -> str:
    """What the model reads back: a count line, then one line per item."""
    if not entries:
        return "The plan is now empty."
    done = sum(e.status == "completed" for e in entries)
    active = sum(e.status == "in_progress" for e in entries)
    head = f"Plan updated: {len(entries)} item(s), {done} completed, {active} in progress."
    return "\n".join([head, *(f"{_MARKS[e.status]} {e.content}" for e in entries)])


def latest_plan(messages: Iterable[Any]) -> tuple[PlanEntry, ...] | None:
    """The plan of a branch: the one in its latest successful `todo_write` result (None if it never had one).
    `messages` are session entries' `message` dicts, oldest first."""
    found: tuple[PlanEntry, ...] | None = None
    for m in messages:
        if m.get("role") == "tool" and m.get("name") == TodoWriteTool.name and not m.get("isError"):
            try:
                found = parse_plan((m.get("details") or {}).get("plan"))
            except TodoError:
                continue
    return found


class TodoWriteTool:
    """Keep the plan: the whole list, every call."""

    name = "todo_write"
    kind: ToolKind = "think"
    read_only = True
    intent = ToolIntent(effect="think", verb="updates the plan")
    description = (
        "Keep a plan of the task as a todo list the user can follow. Send the WHOLE list every time (it replaces "
        "the previous one): each item's content, its status (pending, in_progress, completed) and optionally its "
        "priority (high, medium, low). Use it for work of three steps or more; keep exactly one item in_progress "
        "while working and mark items completed as soon as they are done."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "maxItems": MAX_ITEMS,
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "What to do, imperative."},
                        "status": {"type": "string", "enum": list(_STATUSES)},
                        "priority": {"type": "string", "enum": list(_PRIORITIES)},
                    },
                    "required": ["content", "status"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["todos"],
        "additionalProperties": False,
    }

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        """'Update the plan (N items)'."""
        todos = args.get("todos")
        n = len(todos) if isinstance(todos, list) else 0
        return CallDescription(title=f"Update the plan ({n} item{'s' if n != 1 else ''})")

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        """Planning changes no file."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Replace the plan and announce it."""
        try:
            entries = parse_plan(args.get("todos"))
        except TodoError as e:
            return error_output(str(e))
        if ctx.emit is not None:
            ctx.emit(PlanEvent(entries=entries))
        return ToolOutput(content=render_plan(entries), details={"plan": plan_to_list(entries)})
