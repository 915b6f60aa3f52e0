# Concept: the read tool — a text file's lines, head-truncated with Pi's continuation notices.
"""`ReadTool`: read a text file (optionally a line window) with Pi's limits and notices."""

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
from kgent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head

MAX_READ_BYTES = 64 * 1024 * 1024


class ReadTool:
    """Read a text file's contents."""

    name = "read"
    kind: ToolKind = "read"
    read_only = True
    intent = ToolIntent(effect="read", path_arg="path", verb="reads")
    description = (
        "Read the contents of a text file. Output is limited to "
        f"{DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB, whichever comes first; when it is cut, "
        "a notice says which offset to use to continue. Use offset (1-based line number) and limit (number of "
        "lines) to read a window of a large file. Binary files are refused."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Path to the file (relative to the workspace or absolute)",
            },
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "Line number to start reading from (1-based)",
            },
            "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to read"},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        """'Read <path>'."""
        raw = str(args.get("path") or "")
        rel = classify_path(ctx.workspace, raw).rel if raw else raw
        return CallDescription(title=f"Read {rel}", path=rel)

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        """Reading changes nothing."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Read the file and format the window."""
        try:
            offset: int | None = args.get("offset")  # checked against `parameters` (kgent.kernel.arguments)
            limit: int | None = args.get("limit")
            path = resolve(ctx.workspace, args["path"], allow_outside=ctx.allow_outside)
        except PathError as e:
            return error_output(e.message)
        shown = path.rel
        try:
            st = await ctx.fs.stat(path.abs)
            if st.is_dir:
                return error_output(f"Path is a directory: {shown}. Use ls to list it.")
            if st.size > MAX_READ_BYTES:
                return error_output(
                    f"File is too large to read ({format_size(st.size)}): {shown}. "
                    "Use bash (head, tail, sed -n) to inspect parts of it."
                )
            data = await ctx.fs.read_bytes(path.abs)
        except FileNotFoundError:
            return error_output(f"File not found: {shown}")
        except OSError as e:
            return error_output(f"Cannot read {shown}: {e.strerror or e}")
        if b"\x00" in data[:8192]:
            return error_output(
                f"Cannot read binary file: {shown} (it contains NUL bytes). Only text files can be read."
            )
        text = data.decode("utf-8", "replace").removeprefix("\ufeff").replace("\r\n", "\n")
        return _format(text, shown, offset, limit)


def _format(text: str, shown: str, offset: int | None, limit: int | None) -> ToolOutput:
    lines = text.split("\n")
    total = len(lines)
    start = offset - 1 if offset else 0
    if start >= total:
        return error_output(f"Offset {offset} is beyond end of file ({total} lines total)")
    first = start + 1
    user_lines: int | None = None
    if limit is not None:
        end = min(start + limit, total)
        selected = "\n".join(lines[start:end])
        user_lines = end - start
    else:
        selected = "\n".join(lines[start:])
    tr = truncate_head(selected)
    details: dict[str, Any] = {}
    if tr.first_line_exceeds_limit:
        size = format_size(len(lines[start].encode("utf-8", "surrogatepass")))
        out = (
            f"[Line {first} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{first}p' {shown} | head -c {DEFAULT_MAX_BYTES}]"
        )
        details["truncation"] = tr.as_dict()
    elif tr.truncated:
        last = first + tr.output_lines - 1
        out = tr.content
        if tr.truncated_by == "lines":
            out += f"\n\n[Showing lines {first}-{last} of {total}. Use offset={last + 1} to continue.]"
        else:
            out += (
                f"\n\n[Showing lines {first}-{last} of {total} ({format_size(DEFAULT_MAX_BYTES)} limit). "
                f"Use offset={last + 1} to continue.]"
            )
        details["truncation"] = tr.as_dict()
    elif user_lines is not None and start + user_lines < total:
        remaining = total - (start + user_lines)
        out = (
            tr.content
            + f"\n\n[{remaining} more lines in file. Use offset={start + user_lines + 1} to continue.]"
        )
    else:
        out = tr.content
    return ToolOutput(content=out, details=details)
