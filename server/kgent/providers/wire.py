"""What both wire formats share: compact JSON, the compaction-summary wrapper, and tool-argument parsing."""

from __future__ import annotations

import json
from typing import Any

SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n"


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON. A lone surrogate (a model may send `\\ud800` in tool arguments) is written as its JSON
    escape rather than failing the next request."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "backslashreplace")


def summary_text(text: str) -> str:
    return f"{SUMMARY_PREFIX}<summary>\n{text}\n</summary>"


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """A tool call's arguments and, when they are not a JSON object, why (→ `ToolCall.arguments_error`).

    Bad argument JSON does not fail the turn: the kernel answers that call with an `invalid_arguments` error result,
    so the model sees its mistake and tries again, while the other calls of the turn still run. Failing the whole
    run would throw away a turn that is otherwise fine over an error the model can fix itself."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        snippet = raw if len(raw) <= 200 else raw[:200] + "…"
        return {}, f"arguments are not valid JSON ({exc}): {snippet}"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None
