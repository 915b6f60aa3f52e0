"""`kgent demo extension`: an extension registered in-process (kgent.ext's API, no config needed) on the scripted
provider — its tool answering, its before_tool_call hook denying a call, and a hook that fails, reported by name."""

from __future__ import annotations

from typing import Any

from kgent.core.messages import ToolCall, ToolResultMessage
from kgent.ext.api import ExtensionAPI
from kgent.kernel.hooks import HookContext
from kgent.tools.base import CallDescription, FileChangePreview, ToolContext, ToolIntent, ToolOutput

PROMPT = "Count the words of a sentence, clean the build, then work out 6*7."
SCRIPT: list[list[dict[str, Any]]] = [
    [
        {"text": "Counting with the extension's tool."},
        {"tool": "word_count", "args": {"text": "hooks return values"}},
    ],
    [{"text": "Cleaning up."}, {"tool": "bash", "args": {"command": "rm -rf build"}}],
    [{"text": "Now the sum."}, {"tool": "calculator", "args": {"expression": "6*7"}}],
    [
        {
            "text": "Done: one answer, one call denied by the guard extension, one hook failure reported by name."
        }
    ],
]


class WordCount:
    """A tool an extension adds: counts words (pure computation, so the policy runs it unasked)."""

    name = "word_count"
    description = "Count the words in a text."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    kind = "think"
    read_only = True
    intent = ToolIntent(effect="think")

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        return CallDescription(title=f"count the words of {args.get('text', '')!r}")

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(content=f"{len(str(args['text']).split())} words")


def guard(ctx: HookContext, call: ToolCall) -> str | None:
    """Deny shell commands that delete recursively (before anyone is asked)."""
    if call.name == "bash" and "rm -rf" in str(call.arguments.get("command", "")):
        return "recursive deletes are not allowed in this project"
    return None


def register_guard(api: ExtensionAPI) -> None:
    api.tool(WordCount())
    api.hook("before_tool_call", guard)


def register_flaky(api: ExtensionAPI) -> None:
    def audit(ctx: HookContext, call: ToolCall, result: ToolResultMessage) -> None:
        if call.name == "calculator":  # audits only sums, and its server is down
            raise ConnectionError("the audit log server is unreachable")

    api.hook("after_tool_call", audit)
