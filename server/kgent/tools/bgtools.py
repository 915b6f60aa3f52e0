# Concept: the tools that reach a background command by its id — read its new output, send it a line, stop it.
"""`bash_output`, `bash_input`, `bash_stop`: the model's side of kgent.tools.background (the bash tool starts them)."""

from __future__ import annotations

import re
from typing import Any

from kgent.core.events import ToolKind
from kgent.tools.background import BackgroundCommand, BackgroundCommands, BackgroundError
from kgent.tools.base import (
    CallDescription,
    FileChangePreview,
    ToolContext,
    ToolIntent,
    ToolOutput,
    error_output,
)

MAX_WAIT = 600.0
_ID = {"type": "string", "description": "The background command's id (from bash with background: true)"}


def _details(cmd: BackgroundCommand) -> dict[str, Any]:
    details: dict[str, Any] = {"backgroundId": cmd.id, "state": cmd.state}
    if cmd.exit_code is not None:
        details["exitCode"] = cmd.exit_code
    return details


def _commands(ctx: ToolContext) -> BackgroundCommands:
    if ctx.background is None:
        raise BackgroundError("Background commands are not available here")
    return ctx.background


class _BackgroundTool:
    kind: ToolKind = "execute"
    read_only = False
    verb = ""

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        return CallDescription(title=f"{self.verb} background command {args.get('id', '')}".strip())

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        return None


class BashOutputTool(_BackgroundTool):
    """Read a background command's new output."""

    name = "bash_output"
    verb = "Read"
    kind: ToolKind = "read"
    intent = ToolIntent(effect="read", verb="reads a background command's output")
    description = (
        "Read what a background command printed since the last read (and whether it still runs). Optionally wait: "
        "with `until` (a Python regular expression), until its output so far (what you read already included) "
        "matches, or the command ends; with "
        "`wait` alone, until the command ends — at most `wait` seconds (default 30 with `until`, else 0)."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "id": _ID,
            "until": {"type": "string", "description": "Wait until the new output matches this regex"},
            "wait": {
                "type": "number",
                "minimum": 0,
                "description": f"Seconds to wait at most (max {MAX_WAIT:g})",
            },
        },
        "required": ["id"],
        "additionalProperties": False,
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        try:
            cmd = _commands(ctx).get(str(args["id"]))
            until = re.compile(args["until"]) if args.get("until") else None
        except BackgroundError as exc:
            return error_output(str(exc))
        except re.error as exc:
            return error_output(f"`until` is not a regular expression: {exc}")
        wait = min(float(args.get("wait", 30.0 if until is not None else 0.0)), MAX_WAIT)
        text, met = await cmd.read(until, wait)
        note = ""
        if until is not None and not met and cmd.state == "running":
            note = f" (no match for `until` within {wait:g} s)"
        elif until is None and wait > 0 and cmd.state == "running":
            note = f" (still running after {wait:g} s)"
        return ToolOutput(
            content=f"{text or '(no new output)'}\n\n{cmd.status_line()}{note}", details=_details(cmd)
        )


class BashInputTool(_BackgroundTool):
    """Send a line to a background command's stdin."""

    name = "bash_input"
    verb = "Send input to"
    # What a line does depends on the program reading it (a shell runs it): the policy cannot judge it, so it asks
    # (intent "execute" without a command the classifier could read is an unknown operation).
    intent = ToolIntent(effect="execute")
    description = "Write a line of text (a newline is added) to a background command's stdin."
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"id": _ID, "text": {"type": "string", "description": "The line to send"}},
        "required": ["id", "text"],
        "additionalProperties": False,
    }

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        text = str(args.get("text", ""))
        return CallDescription(title=f"Send a line to background command {args.get('id', '')}", command=text)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        try:
            cmd = _commands(ctx).get(str(args["id"]))
            cmd.write(str(args["text"]))
        except BackgroundError as exc:
            return error_output(str(exc))
        return ToolOutput(content=f"Sent to {cmd.id}. {cmd.status_line()}", details=_details(cmd))


class BashStopTool(_BackgroundTool):
    """Stop a background command."""

    name = "bash_stop"
    verb = "Stop"
    intent = ToolIntent(effect="think", verb="stops a background command")
    description = "Stop a background command (its whole process group) and show what it printed last."
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"id": _ID},
        "required": ["id"],
        "additionalProperties": False,
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        try:
            cmd = await _commands(ctx).stop(str(args["id"]))
        except BackgroundError as exc:
            return error_output(str(exc))
        text, _ = await cmd.read(None, 0)
        return ToolOutput(
            content=f"{text or '(no new output)'}\n\n{cmd.status_line()}", details=_details(cmd)
        )
