"""Diagnostics after edits: one run's view of what its changes broke. Before a file's first change the run takes
its diagnostics as they were; after each change (an edit, or a shell command that changed such a file on disk) it
reports the ones that are new (errors first, capped) — in the tool result the model reads and in the `tool_update`
the fronts show — and keeps the rest as the next baseline.

Each source bounds its own waits and notes a failure once (kgent.lsp.pool, kgent.service.hostdiagnostics)."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from kgent.core.diagnostics import SEVERITIES, Diagnostic, DiagnosticSource
from kgent.files.ops import FileOps, LocalFileOps
from kgent.files.paths import PathError, resolve
from kgent.tools.base import Tool, ToolOutput

MAX_REPORTED = 10  # new diagnostics listed per change; the rest are counted


class RunDiagnostics:
    """The diagnostics side of one run's edits (`before` a change, `after` it)."""

    def __init__(self, source: DiagnosticSource, fs: FileOps, workspace: Path) -> None:
        self.source = source
        self.fs = fs
        self.workspace = workspace
        self.known: dict[Path, list[Diagnostic]] = {}  # each file's diagnostics as last seen
        self.stamps: dict[
            Path, str | None
        ] = {}  # the file on disk then (sha256), to see what a command changed
        self.disk = LocalFileOps()

    def handles(self, path: Path) -> bool:
        return self.source.handles(path)

    async def before(self, path: Path) -> None:
        """Take the file's baseline, unless this run already knows it."""
        if path not in self.known and self.source.handles(path):
            found = await self._collect(path)
            if found is not None:
                self.known[path] = found

    async def after_command(self) -> list[Diagnostic] | None:
        """After a shell command: what it added to the files this run has diagnostics of and that it changed on
        disk (None: it changed none of them)."""
        found: list[Diagnostic] | None = None
        for path in list(self.known):
            if await self._stamp(path) != self.stamps.get(path):
                new = await self.after(path)
                if new is not None:
                    found = [*(found or []), *new]
        return None if found is None else sorted(found, key=_order)

    async def after(self, path: Path) -> list[Diagnostic] | None:
        """The diagnostics the change added (None: the source had nothing to say), most severe first."""
        if not self.source.handles(path) and path not in self.known:
            return None
        found = await self._collect(path)
        if found is None:
            return None
        baseline = Counter(d.identity() for d in self.known.get(path, []))
        self.known[path] = found
        new: list[Diagnostic] = []
        for d in found:
            if baseline[d.identity()] > 0:
                baseline[d.identity()] -= 1
            else:
                new.append(d)
        return sorted(new, key=_order)

    def take_notes(self) -> list[str]:
        return self.source.take_notes()

    async def _collect(self, path: Path) -> list[Diagnostic] | None:
        text: str | None = None
        if self.source.needs_text:
            try:
                text = (await self.fs.read_bytes(path)).decode("utf-8", "replace")
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                text = None
        stamp = await self._stamp(path)
        found = await self.source.collect(path, text)
        if found is None:
            return None
        self.stamps[path] = stamp
        rel = _shown(path, self.workspace)
        return [replace(d, path=rel) for d in found]

    async def _stamp(self, path: Path) -> str | None:
        try:
            return hashlib.sha256(await self.disk.read_bytes(path)).hexdigest()
        except OSError:
            return None


def _order(d: Diagnostic) -> tuple[int, str, int, int]:
    return (SEVERITIES.index(d.severity), d.path, d.line, d.column)


def _shown(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def report(new: list[Diagnostic]) -> str:
    """The lines the model reads after its tool's output."""
    counts = Counter(d.severity for d in new)
    summary = ", ".join(f"{counts[s]} {s}{'s' if counts[s] > 1 else ''}" for s in SEVERITIES if counts[s])
    lines = [f"New diagnostics after this change ({summary}):"]
    lines += [f"  {d.describe()}" for d in new[:MAX_REPORTED]]
    if len(new) > MAX_REPORTED:
        lines.append(f"  … and {len(new) - MAX_REPORTED} more")
    return "\n".join(lines)


def edited_path(tool: Tool, args: Mapping[str, Any], workspace: Path, allow_outside: bool) -> Path | None:
    """The file an edit-kind call changes (edit, write, a tool like them), when it names one that resolves."""
    intent = getattr(tool, "intent", None)
    if tool.kind != "edit" or intent is None or intent.effect != "write" or not intent.path_arg:
        return None
    raw = args.get(intent.path_arg)
    if not isinstance(raw, str) or not raw or "\0" in raw:
        return None
    try:
        return resolve(workspace, raw, allow_outside=allow_outside).abs
    except PathError:
        return None


async def with_diagnostics(
    diagnostics: RunDiagnostics, path: Path | None, out: ToolOutput
) -> tuple[ToolOutput, tuple[Diagnostic, ...] | None]:
    """The call's output with the new diagnostics of `path` (None: of the files a command changed) and the source's
    notes after it; the diagnostics for the event (None when there was nothing to ask or nothing came back)."""
    if path is None:
        new = await diagnostics.after_command()
    else:
        new = await diagnostics.after(path) if not out.is_error else None
    notes = diagnostics.take_notes()
    parts = [out.content] if out.content else []
    if new:
        parts.append(report(new))
    parts += [f"[kgent: {n}]" for n in notes]
    content = "\n\n".join(parts)
    out = out if content == out.content else replace(out, content=content)
    return out, (tuple(new) if new is not None else None)
