# Concept: the grep tool — regex or literal search over files with context, via ripgrep or a Python fallback.
"""`GrepTool`: search file contents (.gitignore respected), Pi's limits and notices."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgent.core.events import ToolKind
from kgent.files import gate
from kgent.files.ignore import glob_match
from kgent.files.paths import PathError, classify_path, is_hardlinked, is_protected_name
from kgent.tools.base import (
    CallDescription,
    FileChangePreview,
    ToolContext,
    ToolIntent,
    ToolOutput,
    error_output,
)
from kgent.tools.rg import BASE_FLAGS, exclusions, find_rg, run_rg
from kgent.tools.search import SearchRoot, finish, search_root
from kgent.tools.truncate import GREP_MAX_LINE_LENGTH, truncate_line

DEFAULT_LIMIT = 100


@dataclass(frozen=True, slots=True)
class Hit:
    """One output line: a match (':') or a context line ('-')."""

    path: str
    line: int
    text: str
    match: bool


def _text(obj: dict[str, Any]) -> str:
    if "text" in obj:
        return str(obj["text"])
    return base64.b64decode(obj.get("bytes", "")).decode("utf-8", "replace")


class GrepTool:
    """Search file contents."""

    name = "grep"
    kind: ToolKind = "search"
    read_only = True
    intent = ToolIntent(effect="read", path_arg="path", default_path=".", verb="searches")
    description = (
        "Search file contents for a regex (or a literal string with literal=true). Respects .gitignore and "
        "includes hidden files. Output lines are 'path:line: text' for matches and 'path-line- text' for context "
        f"lines. Returns at most `limit` matches (default {DEFAULT_LIMIT}); long lines are cut to "
        f"{GREP_MAX_LINE_LENGTH} characters. Use glob (e.g. '*.py') to filter files."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regex (or literal string) to search for"},
            "path": {
                "type": "string",
                "description": "Directory or file to search (default: workspace root)",
            },
            "glob": {"type": "string", "description": "Only search files matching this glob, e.g. '*.ts'"},
            "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default false)"},
            "literal": {
                "type": "boolean",
                "description": "Treat pattern as a literal string (default false)",
            },
            "context": {"type": "integer", "minimum": 0, "description": "Lines of context around each match"},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Maximum matches (default {DEFAULT_LIMIT})",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def __init__(self, *, force_fallback: bool = False) -> None:
        self.force_fallback = force_fallback

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        """'Search `pattern` in <path>'."""
        raw = str(args.get("path") or ".")
        rel = classify_path(ctx.workspace, raw).rel
        return CallDescription(title=f"Search `{args.get('pattern', '')}` in {rel}", path=rel)

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        """Searching changes nothing."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Search and format hits."""
        try:
            pattern: str = args["pattern"]  # checked against `parameters` (kgent.kernel.arguments)
            glob: str | None = args.get("glob") or None
            ignore_case, literal = bool(args.get("ignoreCase")), bool(args.get("literal"))
            context: int = args.get("context") or 0
            limit: int = args.get("limit") or DEFAULT_LIMIT
            root = await search_root(ctx, args.get("path") or ".")
        except PathError as e:
            return error_output(e.message)
        except FileNotFoundError as e:
            return error_output(f"Path not found: {e.args[0]}")
        rg = None if self.force_fallback else find_rg()
        if rg is not None:
            result = await self._rg(rg, root, pattern, glob, ignore_case, literal, context, limit)
        else:
            try:
                flags = re.IGNORECASE if ignore_case else 0
                regex = re.compile(re.escape(pattern) if literal else pattern, flags)
            except re.error as e:
                return error_output(f"Invalid regex: {e}")
            ignore_from = ctx.workspace if root.path.inside else None
            result = await asyncio.to_thread(_py_search, root, regex, glob, context, limit, ignore_from)
        if isinstance(result, str):
            return error_output(result)
        hits, limit_reached = result
        return _format(hits, limit, limit_reached, engine="fallback" if rg is None else "rg")

    @staticmethod
    async def _rg(
        rg: str,
        root: SearchRoot,
        pattern: str,
        glob: str | None,
        ignore_case: bool,
        literal: bool,
        context: int,
        limit: int,
    ) -> tuple[list[Hit], bool] | str:
        argv = ["--json", *BASE_FLAGS]
        if ignore_case:
            argv.append("--ignore-case")
        if literal:
            argv.append("--fixed-strings")
        if glob:
            argv += ["--glob", glob]
        # A search over a directory never reads protected files (.env*, keys, .git): it was approved as a read of
        # the workspace, not of secrets. Searching a protected path itself was asked for, so it is not filtered.
        argv += exclusions(protected=not root.path.protected)
        if context:
            argv += ["--context", str(context)]
        argv += ["--", pattern, root.target]
        hits: list[Hit] = []
        state = {"matches": 0, "reached": False}
        linked = _LinkCheck(root)

        def on_line(raw: bytes) -> bool:
            try:
                msg = json.loads(raw)
            except ValueError:
                return True
            kind = msg.get("type")
            if kind not in ("match", "context"):
                return True
            if linked.skips(_text(msg["data"]["path"])):
                return True
            if kind == "match":
                if state["matches"] >= limit:
                    state["reached"] = True
                    return False
                state["matches"] += 1
            data = msg["data"]
            text = _text(data.get("lines", {})).rstrip("\r\n")
            hits.append(
                Hit(root.name(_text(data["path"])), int(data.get("line_number") or 0), text, kind == "match")
            )
            return True

        code, err = await run_rg(rg, argv, cwd=root.cwd, on_line=on_line)
        if code not in (None, 0, 1) and not hits:
            return err or f"ripgrep failed with exit code {code}"
        return hits, bool(state["reached"])


class _LinkCheck:
    """A directory search skips files with several hard links (their other names may be outside the workspace, so
    they count as protected); searching such a file by name was asked for, so it is not filtered."""

    def __init__(self, root: SearchRoot) -> None:
        self.root = root
        self.seen: dict[str, bool] = {}

    def skips(self, rel: str) -> bool:
        if self.root.path.protected:
            return False
        known = self.seen.get(rel)
        if known is None:
            parts = rel.removeprefix("./").split("/")
            known = self.seen[rel] = ".git" not in parts and is_hardlinked(str(self.root.cwd / rel))
        return known


def _py_search(
    root: SearchRoot,
    regex: re.Pattern[str],
    glob: str | None,
    context: int,
    limit: int,
    ignore_from: Path | None,
) -> tuple[list[Hit], bool]:
    hits: list[Hit] = []
    matches = 0
    linked = _LinkCheck(root)
    for rel in gate.walk(root.path.abs, ignore_from=ignore_from):
        if glob and not root.is_file and not glob_match(glob, rel):
            continue
        if not root.path.protected and is_protected_name(tuple(rel.split("/"))):
            continue  # as with rg: a directory search skips protected files
        if linked.skips(rel):
            continue
        data = gate.read_walked(root.cwd, rel, protected_ok=root.path.protected)
        if data is None:
            continue
        if b"\x00" in data[:8192]:
            continue
        lines = [ln.rstrip("\r") for ln in data.decode("utf-8", "replace").split("\n")]
        if lines and lines[-1] == "":
            lines.pop()
        found = [i for i, ln in enumerate(lines) if regex.search(ln)]
        if not found:
            continue
        if matches >= limit:
            return hits, True
        take = found[: limit - matches]
        stop = (
            found[len(take)] if len(take) < len(found) else len(lines)
        )  # context must not run into an untaken match
        matches += len(take)
        shown: dict[int, bool] = {}
        for m in take:
            for i in range(max(0, m - context), min(stop, m + context + 1)):
                shown.setdefault(i, False)
            shown[m] = True
        hits.extend(Hit(root.name(rel), i + 1, lines[i], shown[i]) for i in sorted(shown))
        if len(take) < len(found):
            return hits, True
    return hits, False


def _format(hits: list[Hit], limit: int, limit_reached: bool, *, engine: str) -> ToolOutput:
    lines: list[str] = []
    cut_any = False
    for hit in hits:
        text, cut = truncate_line(hit.text)
        cut_any = cut_any or cut
        sep = ":" if hit.match else "-"
        lines.append(f"{hit.path}{sep}{hit.line}{sep} {text}")
    notices: list[str] = []
    if limit_reached:
        notices.append(f"{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern")
    if cut_any:
        notices.append(
            f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
        )
    details: dict[str, object] = {"matches": sum(h.match for h in hits), "engine": engine}
    if limit_reached:
        details["matchLimitReached"] = limit
    return finish(lines, notices, "No matches found", details)
