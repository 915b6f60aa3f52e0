# Concept: search plumbing shared by grep and find — where to search from and how results are named and capped.
"""Resolve a search root, name results relative to the workspace, and cap output at 50 KB with Pi's notices."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgent.files.paths import ResolvedPath, resolve
from kgent.tools.base import ToolContext, ToolOutput
from kgent.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head


@dataclass(frozen=True, slots=True)
class SearchRoot:
    """Where a search runs: `cwd` for the searcher, `target` its path argument, `prefix` for naming results."""

    path: ResolvedPath
    cwd: Path
    target: str
    prefix: str
    is_file: bool

    def name(self, rel: str) -> str:
        """A result's display path: workspace-relative when inside, else absolute."""
        rel = rel.removeprefix("./")
        if self.is_file:
            return self.path.rel
        return f"{self.prefix}/{rel}" if self.prefix else rel


async def search_root(ctx: ToolContext, raw: str) -> SearchRoot:
    """Resolve the search path; raises PathError or FileNotFoundError."""
    path = resolve(ctx.workspace, raw or ".", allow_outside=ctx.allow_outside)
    if not await ctx.fs.exists(path.abs):
        raise FileNotFoundError(path.rel)
    if await ctx.fs.is_dir(path.abs):
        prefix = "" if path.rel == "." else path.rel.rstrip("/")
        return SearchRoot(path, path.abs, ".", prefix, is_file=False)
    return SearchRoot(path, path.abs.parent, path.abs.name, "", is_file=True)


def finish(lines: list[str], notices: list[str], empty: str, details: dict[str, object]) -> ToolOutput:
    """Join result lines, byte-cap them, and append the bracketed notices."""
    if not lines:
        return ToolOutput(content=empty, details=details)
    tr = truncate_head("\n".join(lines), max_lines=len(lines) + 1, max_bytes=DEFAULT_MAX_BYTES)
    out = tr.content
    if tr.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = tr.as_dict()
    if notices:
        out += f"\n\n[{'. '.join(notices)}]"
    return ToolOutput(content=out, details=details)
