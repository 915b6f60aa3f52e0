# Concept: the write tool — create or overwrite a whole file atomically, recording its original first.
"""`WriteTool`: write a file's full contents (atomic, parents created), with a diff preview."""

from __future__ import annotations

from typing import Any

from kgent.changes.diffs import unified_diff
from kgent.core.events import ToolKind
from kgent.files.paths import PathError, ResolvedPath, classify_path, resolve
from kgent.tools.base import (
    CallDescription,
    FileChangePreview,
    PreviewError,
    ToolContext,
    ToolIntent,
    ToolOutput,
    error_output,
)

_DIFF_LIMIT = 512 * 1024  # bytes of new content up to which a write reports its diff


async def read_existing_text(path: ResolvedPath, ctx: ToolContext) -> str | None:
    """The current text of a file, or None when absent or unreadable."""
    try:
        if not await ctx.fs.exists(path.abs) or await ctx.fs.is_dir(path.abs):
            return None
        return (await ctx.fs.read_bytes(path.abs)).decode("utf-8", "replace")
    except OSError:
        return None


class WriteTool:
    """Create or overwrite a file."""

    name = "write"
    kind: ToolKind = "edit"
    read_only = False
    intent = ToolIntent(effect="write", path_arg="path", verb="writes")
    description = (
        "Write content to a file, creating it (and any missing parent directories) or overwriting it "
        "completely. Use this for new files or complete rewrites; use edit for targeted changes."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Path to the file (relative to the workspace or absolute)",
            },
            "content": {"type": "string", "description": "The full content to write"},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        """'Write <path>'."""
        raw = str(args.get("path") or "")
        rel = classify_path(ctx.workspace, raw).rel if raw else raw
        return CallDescription(title=f"Write {rel}", path=rel)

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        """The diff from the current file (or nothing) to the new content; raises PreviewError when the write would
        fail (the path is a directory or cannot be used)."""
        raw, content = args.get("path"), args.get("content")
        if not isinstance(raw, str) or not isinstance(content, str):
            return None  # not the tool's arguments: the argument check reports it
        try:
            path = resolve(ctx.workspace, raw, allow_outside=ctx.allow_outside)
            is_dir = await ctx.fs.is_dir(path.abs)
        except PathError as e:
            raise PreviewError(e.message) from None
        except OSError as e:
            raise PreviewError(f"Cannot write {raw}: {e.strerror or e}") from None
        if is_dir:
            raise PreviewError(f"Path is a directory: {path.rel}")
        old = await read_existing_text(path, ctx)
        return FileChangePreview(
            path=path.rel, old_text=old, new_text=content, diff=unified_diff(path.rel, old, content)
        )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Record the original, then write atomically."""
        try:
            content: str = args["content"]  # checked against `parameters` (kgent.kernel.arguments)
            path = resolve(ctx.workspace, args["path"], allow_outside=ctx.allow_outside)
        except PathError as e:
            return error_output(e.message)
        data = content.encode("utf-8", "surrogatepass")
        try:
            if await ctx.fs.is_dir(path.abs):
                return error_output(f"Path is a directory: {path.rel}")
            # the diff an editor shows for the change (also when no approval was asked); skipped for huge files
            old = await read_existing_text(path, ctx) if len(data) <= _DIFF_LIMIT else None
            diff = unified_diff(path.rel, old, content) if len(data) <= _DIFF_LIMIT else None
            if ctx.changes is not None:
                await ctx.changes.record_before(path.abs, ctx.fs)
            await ctx.fs.write_bytes_atomic(path.abs, data)
        except OSError as e:
            return error_output(f"Cannot write {path.rel}: {e.strerror or e}")
        details: dict[str, Any] = {"path": path.rel}
        if diff:
            details["diff"] = diff
        return ToolOutput(content=f"Successfully wrote {len(data)} bytes to {path.rel}", details=details)
