# Concept: the ls tool — one directory's entries, alphabetical, dotfiles included, '/' marking directories.
"""`LsTool`: list a directory through ctx.fs, Pi's limits and notices."""

from __future__ import annotations

from typing import Any

from kgent.core.events import ToolKind
from kgent.files.paths import PathError, classify_path, resolve
from kgent.tools.base import (
    CallDescription,
    FileChangePreview,
    ToolContext,
    ToolIntent,
    ToolOutput,
    error_output,
)
from kgent.tools.search import finish

DEFAULT_LIMIT = 500


class LsTool:
    """List a directory."""

    name = "ls"
    kind: ToolKind = "search"
    read_only = True
    intent = ToolIntent(effect="read", path_arg="path", default_path=".", verb="lists")
    description = (
        "List the entries of a directory, alphabetically, including dotfiles; directories end with '/'. "
        f"Returns at most `limit` entries (default {DEFAULT_LIMIT}). Use find to search recursively."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory to list (default: workspace root)"},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Maximum entries (default {DEFAULT_LIMIT})",
            },
        },
        "additionalProperties": False,
    }

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        """'List <path>'."""
        rel = classify_path(ctx.workspace, str(args.get("path") or ".")).rel
        return CallDescription(title=f"List {rel}", path=rel)

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        """Listing changes nothing."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """List the directory."""
        try:
            limit: int = (
                args.get("limit") or DEFAULT_LIMIT
            )  # checked against `parameters` (kgent.kernel.arguments)
            path = resolve(ctx.workspace, args.get("path") or ".", allow_outside=ctx.allow_outside)
        except PathError as e:
            return error_output(e.message)
        try:
            if not await ctx.fs.exists(path.abs):
                return error_output(f"Path not found: {path.rel}")
            if not await ctx.fs.is_dir(path.abs):
                return error_output(f"Not a directory: {path.rel}")
            entries = await ctx.fs.list_dir(path.abs)
        except OSError as e:
            return error_output(f"Cannot list {path.rel}: {e.strerror or e}")
        entries.sort(key=lambda e: (e.name.lower(), e.name))
        shown = [e.name + ("/" if e.is_dir else "") for e in entries[:limit]]
        reached = len(entries) > limit
        notices = [f"{limit} entries limit reached. Use limit={limit * 2} for more"] if reached else []
        details: dict[str, object] = {"count": len(shown)}
        if reached:
            details["entryLimitReached"] = limit
        return finish(shown, notices, "(empty directory)", details)
