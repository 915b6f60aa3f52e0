"""An extension's tool as runs see it: checked again at every use, its failures made error results naming the
extension, its output truncated like a built-in tool's."""

from __future__ import annotations

import asyncio
from typing import Any

from kgent.core.events import ToolKind
from kgent.ext.registry import ToolEntry, tool_problem
from kgent.tools.base import CallDescription, FileChangePreview, ToolContext, ToolIntent, ToolOutput
from kgent.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head


class ExtensionTool:
    def __init__(self, entry: ToolEntry) -> None:
        self.extension = entry.extension
        self.inner = entry.tool
        self.name: str = entry.tool.name
        self.description: str = entry.tool.description
        self.parameters: dict[str, Any] = entry.parameters
        self.kind: ToolKind = entry.tool.kind
        self.read_only: bool = entry.tool.read_only
        self.intent: ToolIntent = entry.tool.intent

    def _where(self) -> str:
        return f"extension {self.extension!r}, tool {self.name!r}"

    def _problem(self) -> str | None:
        """The registration checks again: a tool that changed its name or schema since is refused."""
        if (
            getattr(self.inner, "name", None) != self.name
            or getattr(self.inner, "parameters", None) != self.parameters
        ):
            return "its name or parameters changed after it was registered"
        return tool_problem(self.inner)

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        try:
            desc = self.inner.describe(args, ctx)
        except Exception:  # a title is a courtesy: the call itself reports real problems
            desc = None
        return (
            desc
            if isinstance(desc, CallDescription)
            else CallDescription(title=f"{self.name} ({self.extension})")
        )

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        try:
            found = await self.inner.preview(args, ctx)
        except Exception:
            return None
        return found if isinstance(found, FileChangePreview) else None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        problem = self._problem()
        if problem:
            return ToolOutput(content=f"extension_error: {self._where()}: {problem}", is_error=True)
        try:
            out = await self.inner.run(args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return ToolOutput(
                content=f"tool_error: {self._where()} failed: {type(exc).__name__}: {exc}", is_error=True
            )
        if not isinstance(out, ToolOutput) or not isinstance(out.content, str):
            kind = type(out).__name__
            return ToolOutput(
                content=f"extension_error: {self._where()} returned a {kind}, not a ToolOutput", is_error=True
            )
        return truncated(out)


def truncated(out: ToolOutput) -> ToolOutput:
    """`out` cut to the built-in tools' limits (head kept), with a notice and the truncation details."""
    tr = truncate_head(out.content)
    if not tr.truncated:
        return out
    notice = (
        f"\n\n[Output truncated: showing {tr.output_lines} of {tr.total_lines} lines "
        f"({format_size(tr.output_bytes)} of {format_size(tr.total_bytes)}; limit {format_size(DEFAULT_MAX_BYTES)})]"
    )
    details = {**out.details, "truncation": tr.as_dict()}
    return ToolOutput(content=tr.content + notice, is_error=out.is_error, details=details)
