"""The checkpoint summary: the request that asks a model for it, and the check of what comes back.

A summary is Markdown with exactly the eight `##` sections of SECTIONS, in order. An update sends the previous
summary plus only the newly covered span, so nothing is summarized twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from kgent.core.messages import (
    AssistantMessage,
    InstructionsMessage,
    Message,
    SummaryMessage,
    ToolResultMessage,
    UserMessage,
)

SECTIONS: tuple[str, ...] = (
    "Goal",
    "Constraints and preferences",
    "Done and verified",
    "In progress",
    "Blocked",
    "Key decisions and rejected approaches",
    "Exact files, symbols, commands and errors",
    "Next steps",
)

SUMMARY_SYSTEM_PROMPT = (
    "You are a context summarization assistant. You read the conversation of a coding agent with its user and "
    "write a structured checkpoint from which another model will continue the work. Do NOT continue the "
    "conversation, do NOT answer questions in it and do NOT call tools. Output only the summary."
)

TOOL_RESULT_CHARS = 2000  # each tool result is cut to this many characters in the serialized conversation

_FORMAT = "\n".join(f"## {s}" for s in SECTIONS)


def serialize(messages: Sequence[Message]) -> str:
    """The conversation as plain text: `[User]: …`, `[Assistant]: …`, `[Assistant tool calls]: …`, `[Tool result]: …`."""
    lines: list[str] = []
    for m in messages:
        match m:
            case UserMessage(text=text, images=images):
                # an image is named, never inlined: the summary request carries no base64
                shown = "".join(f" [image {i.mime_type}, {i.size} bytes]" for i in images)
                lines.append(f"[User]: {text}{shown}")
            case SummaryMessage(text=text):
                lines.append(f"[Earlier summary]: {text}")
            case InstructionsMessage(text=text):
                lines.append(f"[Project instructions]: {text}")
            case AssistantMessage():
                if m.thinking:
                    lines.append(f"[Assistant thinking]: {m.thinking}")
                if m.text:
                    lines.append(f"[Assistant]: {m.text}")
                if m.tool_calls:
                    calls = "; ".join(
                        f"{c.name}({', '.join(f'{k}={json.dumps(v, ensure_ascii=False)}' for k, v in c.arguments.items())})"
                        for c in m.tool_calls
                    )
                    lines.append(f"[Assistant tool calls]: {calls}")
            case ToolResultMessage():
                content = m.content
                if len(content) > TOOL_RESULT_CHARS:
                    content = (
                        content[:TOOL_RESULT_CHARS]
                        + f"\n[… {len(m.content) - TOOL_RESULT_CHARS} more characters]"
                    )
                status = " (error)" if m.is_error else ""
                lines.append(f"[Tool result {m.name}{status}]: {content}")
    return "\n".join(lines)


def summary_prompt(
    messages: Sequence[Message],
    *,
    previous: str | None,
    read_files: Sequence[str] = (),
    modified_files: Sequence[str] = (),
    focus: str | None = None,
) -> str:
    """The user message of a summary request: the previous summary (if any), the new span, the files touched."""
    parts: list[str] = []
    if previous:
        parts.append(f"<previous-summary>\n{previous}\n</previous-summary>")
    parts.append(f"<conversation>\n{serialize(messages)}\n</conversation>")
    parts.append(
        "<files>\nRead: "
        + (", ".join(read_files) or "(none)")
        + "\nModified: "
        + (", ".join(modified_files) or "(none)")
        + "\n</files>"
    )
    if previous:
        task = (
            "Update the previous summary with the new conversation above. Keep everything in it that still holds, "
            "move finished work from In progress to Done and verified, add new decisions, files, commands and "
            "errors, and drop only what the new conversation makes obsolete."
        )
    else:
        task = "Summarize the conversation above."
    parts.append(
        f"{task}\n\nWrite Markdown with exactly these eight sections, as level-2 headings in this order, with "
        f"nothing before the first one:\n\n{_FORMAT}\n\nUnder each heading write concise bullet points "
        '("- (none)" when there is nothing). Keep file paths, symbol names, commands and error messages verbatim.'
    )
    if focus:
        parts.append(f"Additional focus: {focus}")
    return "\n\n".join(parts)


_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def _norm(heading: str) -> str:
    h = heading.strip().strip("*_").rstrip(":").replace("&", "and").lower()
    return " ".join(h.split())


_WANTED = [_norm(s) for s in SECTIONS]


def validate_summary(text: str) -> str:
    """The summary with its headings in canonical spelling and any preamble dropped; ValueError unless its level-1
    and level-2 headings are exactly SECTIONS, in order (case, a trailing colon and '&' for 'and' are forgiven)."""
    lines = text.strip().splitlines()
    fences = [i for i, line in enumerate(lines) if _FENCE.match(line)]
    if (
        len(fences) >= 2
        and fences[-1] == len(lines) - 1
        and not any(_HEADING.match(x) for x in lines[: fences[0]])
    ):
        lines = lines[
            fences[0] + 1 : -1
        ]  # the whole summary wrapped in a code fence (after a preamble, maybe)
    found: list[tuple[int, str]] = []
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line)
        if m and len(m.group(1)) <= 2:
            found.append((i, m.group(2)))
    names = [_norm(h) for _, h in found]
    if names != _WANTED:
        missing = [s for s, n in zip(SECTIONS, _WANTED, strict=True) if n not in names]
        extra = [h for (_, h), n in zip(found, names, strict=True) if n not in _WANTED]
        detail = []
        if missing:
            detail.append("missing " + ", ".join(missing))
        if extra:
            detail.append("unexpected " + ", ".join(extra))
        if not detail:
            detail.append("sections out of order")
        raise ValueError("the summary does not have the eight required sections: " + "; ".join(detail))
    for (i, _), section in zip(found, SECTIONS, strict=True):
        lines[i] = f"## {section}"
    return "\n".join(lines[found[0][0] :]).strip()
