# Concept: the find tool — list files matching a glob, .gitignore respected, via ripgrep or a Python walk.
"""`FindTool`: files by glob pattern, workspace-relative, Pi's limits and notices."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kgent.core.events import ToolKind
from kgent.files import gate
from kgent.files.ignore import glob_match
from kgent.files.paths import PathError, classify_path
from kgent.tools.base import (
    CallDescription,
    FileChangePreview,
    ToolContext,
    ToolIntent,
    ToolOutput,
    error_output,
)
from kgent.tools.rg import BASE_FLAGS, exclusions, find_rg, run_rg
from kgent.tools.search import finish, search_root

DEFAULT_LIMIT = 1000


class FindTool:
    """Find files by glob."""

    name = "find"
    kind: ToolKind = "search"
    read_only = True
    intent = ToolIntent(effect="read", path_arg="path", default_path=".", verb="finds files in")
    description = (
        "Find files whose path matches a glob pattern (e.g. '*.py', 'src/**/*.ts'). A pattern without '/' "
        "matches file names at any depth; one with '/' matches paths relative to the search directory. "
        "Respects .gitignore and includes hidden files. Returns workspace-relative paths, sorted, at most "
        f"`limit` (default {DEFAULT_LIMIT})."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern, e.g. '*.py' or 'src/**/*.json'"},
            "path": {"type": "string", "description": "Directory to search (default: workspace root)"},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Maximum results (default {DEFAULT_LIMIT})",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def __init__(self, *, force_fallback: bool = False) -> None:
        self.force_fallback = force_fallback

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        """'Find `pattern` in <path>'."""
        rel = classify_path(ctx.workspace, str(args.get("path") or ".")).rel
        return CallDescription(title=f"Find `{args.get('pattern', '')}` in {rel}", path=rel)

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        """Finding changes nothing."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """List matching files."""
        try:
            pattern: str = args["pattern"]  # checked against `parameters` (kgent.kernel.arguments)
            limit: int = args.get("limit") or DEFAULT_LIMIT
            root = await search_root(ctx, args.get("path") or ".")
        except PathError as e:
            return error_output(e.message)
        except FileNotFoundError as e:
            return error_output(f"Path not found: {e.args[0]}")
        if not pattern.strip():
            return error_output("Pattern is empty")
        if root.is_file:
            return error_output(f"Not a directory: {root.path.rel}")
        rg = None if self.force_fallback else find_rg()
        if rg is not None:
            found: list[str] = []

            def on_line(raw: bytes) -> bool:
                found.append(raw.decode("utf-8", "surrogateescape"))
                return len(found) <= limit

            argv = ["--files", *BASE_FLAGS, "--glob", pattern, *exclusions(protected=False), "--", "."]
            code, err = await run_rg(rg, argv, cwd=root.cwd, on_line=on_line)
            if code not in (None, 0, 1) and not found:
                return error_output(err or f"ripgrep failed with exit code {code}")
        else:
            ignore_from = ctx.workspace if root.path.inside else None
            found = await asyncio.to_thread(_walk, root.path.abs, pattern, limit, ignore_from)
        reached = len(found) > limit
        names = sorted(root.name(f) for f in found[:limit])
        notices = (
            [f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern"]
            if reached
            else []
        )
        details: dict[str, object] = {"count": len(names), "engine": "fallback" if rg is None else "rg"}
        if reached:
            details["resultLimitReached"] = limit
        return finish(names, notices, "No files found matching pattern", details)


def _walk(root: Path, pattern: str, limit: int, ignore_from: Path | None) -> list[str]:
    out: list[str] = []
    for rel in gate.walk(root, ignore_from=ignore_from):
        if glob_match(pattern, rel):
            out.append(rel)
            if len(out) > limit:
                break
    return out
