# Concept: the edit tool — replace one unique snippet in a file (exact, then fuzzy), keeping BOM and line endings.
"""`EditTool`: targeted replacement of a unique oldText with newText, with a diff preview."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgent.changes.diffs import first_changed_line, unified_diff
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
from kgent.tools.textmatch import find_unique

_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class _Planned:
    old_text: str  # LF-normalized, BOM stripped (for diffs)
    new_text: str
    data: bytes  # what goes to disk: BOM and original line endings restored


class _EditFailure(Exception):
    pass


def _line_ending(text: str) -> str:
    lf = text.find("\n")
    if lf < 0:
        return "\n"
    crlf = text.find("\r\n")
    return "\r\n" if crlf >= 0 and crlf < lf else "\n"


def plan_edit(raw: bytes, old: str, new: str, shown: str) -> _Planned:
    """Compute the edited file; raises _EditFailure with Pi's messages."""
    text = raw.decode("utf-8", "surrogateescape")
    bom = _BOM if text.startswith(_BOM) else ""
    text = text[len(bom) :]
    ending = _line_ending(text)
    content = text.replace("\r\n", "\n")
    old_n, new_n = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    if not old_n:
        raise _EditFailure("oldText must not be empty. Use write to create or overwrite a whole file.")
    match = find_unique(content, old_n)
    if match is None:
        raise _EditFailure(
            f"Could not find the exact text in {shown}. The old text must match exactly including all whitespace and newlines."
        )
    if match.occurrences > 1:
        raise _EditFailure(
            f"Found {match.occurrences} occurrences of the text in {shown}. The text must be unique. "
            "Please provide more context to make it unique."
        )
    updated = content[: match.start] + new_n + content[match.end :]
    if updated == content:
        raise _EditFailure(
            f"No changes made to {shown}. The replacement produced identical content. This might indicate an issue "
            "with special characters or the text not existing as expected."
        )
    body = updated.replace("\n", "\r\n") if ending == "\r\n" else updated
    return _Planned(content, updated, (bom + body).encode("utf-8", "surrogateescape"))


class EditTool:
    """Replace one unique snippet of a file."""

    name = "edit"
    kind: ToolKind = "edit"
    read_only = False
    intent = ToolIntent(effect="write", path_arg="path", verb="edits")
    description = (
        "Edit a file by replacing exactly one occurrence of oldText with newText. oldText must match the file "
        "exactly (including whitespace and newlines) and must be unique: include enough surrounding lines to make "
        "it so. Minor differences in trailing whitespace, smart quotes, dashes and special spaces are tolerated. "
        "Read the file first; use write for new files or complete rewrites."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Path to the file (relative to the workspace or absolute)",
            },
            "oldText": {"type": "string", "description": "Exact text to replace (must occur exactly once)"},
            "newText": {"type": "string", "description": "Text to put in its place"},
        },
        "required": ["path", "oldText", "newText"],
        "additionalProperties": False,
    }

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        """'Edit <path>'."""
        raw = str(args.get("path") or "")
        rel = classify_path(ctx.workspace, raw).rel if raw else raw
        return CallDescription(title=f"Edit {rel}", path=rel)

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        """The would-be diff; raises PreviewError with the message the call would fail with."""
        raw, old, new = args.get("path"), args.get("oldText"), args.get("newText")
        if not isinstance(raw, str) or not isinstance(old, str) or not isinstance(new, str):
            return None  # not the tool's arguments: the argument check reports it
        try:
            path = resolve(ctx.workspace, raw, allow_outside=ctx.allow_outside)
            planned = plan_edit(await self._read(path, ctx), old, new, path.rel)
        except PathError as e:
            raise PreviewError(e.message) from None
        except _EditFailure as e:
            raise PreviewError(str(e)) from None
        return FileChangePreview(
            path=path.rel,
            old_text=planned.old_text,
            new_text=planned.new_text,
            diff=unified_diff(path.rel, planned.old_text, planned.new_text),
            normalized=True,
        )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Apply the edit atomically."""
        try:
            old, new = (
                args["oldText"],
                args["newText"],
            )  # checked against `parameters` (kgent.kernel.arguments)
            path = resolve(ctx.workspace, args["path"], allow_outside=ctx.allow_outside)
        except PathError as e:
            return error_output(e.message)
        try:
            data = await self._read(path, ctx)
            planned = plan_edit(data, old, new, path.rel)
        except _EditFailure as e:
            return error_output(str(e))
        try:
            if ctx.changes is not None:
                await ctx.changes.record_before(path.abs, ctx.fs)
            await ctx.fs.write_bytes_atomic(path.abs, planned.data)
        except OSError as e:
            return error_output(f"Cannot write {path.rel}: {e.strerror or e}")
        diff = unified_diff(path.rel, planned.old_text, planned.new_text)
        return ToolOutput(
            content=f"Successfully replaced text in {path.rel}.",
            details={
                "path": path.rel,
                "diff": diff,
                "firstChangedLine": first_changed_line(planned.old_text, planned.new_text),
            },
        )

    @staticmethod
    async def _read(path: ResolvedPath, ctx: ToolContext) -> bytes:
        try:
            if await ctx.fs.is_dir(path.abs):
                raise _EditFailure(f"Path is a directory: {path.rel}")
            data = await ctx.fs.read_bytes(path.abs)
        except FileNotFoundError:
            raise _EditFailure(f"File not found: {path.rel}") from None
        except OSError as e:
            raise _EditFailure(f"Cannot read {path.rel}: {e.strerror or e}") from None
        if b"\x00" in data[:8192]:
            raise _EditFailure(f"Cannot edit binary file: {path.rel}")
        return data
