# Concept: showing an evaluation's progress — a rich bar with an ETA on a terminal, one line per instance elsewhere.
"""Both report the same things: instances done of those to run, what each finished with, and the time left
(elapsed ÷ done × remaining: the wall clock already includes the workers' overlap)."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

STATUS_STYLE = {
    "submitted": "green",
    "empty_patch": "yellow",
    "max_turns": "yellow",
    "timeout": "yellow",
    "cost_limit": "yellow",
    "invalid_patch": "red",
    "error": "red",
    "workspace_error": "red",
}


def eta_seconds(elapsed: float, done: int, remaining: int) -> float | None:
    """Seconds left at the pace so far; None before the first instance finished."""
    if done <= 0:
        return None
    return elapsed / done * remaining


def clock(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def describe(record: dict[str, Any]) -> str:
    """`submitted  12 turns  34.1k tokens  $0.021  45.2s` (what the summary says about one instance)."""
    tokens = sum(int(v) for v in (record.get("tokens") or {}).values())
    parts = [str(record.get("status")), f"{record.get('turns', 0)} turns", f"{tokens / 1000:.1f}k tokens"]
    if record.get("cost") is not None:
        parts.append(f"${record['cost']:.3f}")
    parts.append(f"{record.get('seconds', 0):.1f}s")
    if record.get("error"):
        parts.append(f"({record['error'].get('code')}: {str(record['error'].get('message', ''))[:120]})")
    return "  ".join(parts)


class LineProgress:
    """One line per finished instance, for logs (Slurm, CI) and pipes."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stderr
        self.total = self.done = 0
        self.t0 = time.monotonic()

    def start(self, total: int, skipped: int, workers: int) -> None:
        self.total, self.t0 = total, time.monotonic()
        already = f", {skipped} already done" if skipped else ""
        self._print(f"{total} instances to run{already}, {workers} at a time")

    def instance_started(self, instance_id: str) -> None:
        pass

    def instance_update(self, instance_id: str, turns: int, tokens: int) -> None:
        pass

    def instance_finished(self, instance_id: str, record: dict[str, Any]) -> None:
        self.done += 1
        eta = eta_seconds(time.monotonic() - self.t0, self.done, self.total - self.done)
        width = len(str(self.total))
        self._print(
            f"[{self.done:>{width}}/{self.total}] {instance_id}  {describe(record)}  ETA {clock(eta)}"
        )

    def finish(self) -> None:
        self._print(f"{self.done}/{self.total} instances run in {clock(time.monotonic() - self.t0)}")

    def _print(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()


class _OverallOnly(ProgressColumn):
    """A column shown on the overall row only (the instances' rows have a description and a clock)."""

    def __init__(self, column: ProgressColumn) -> None:
        super().__init__()
        self.column = column

    def render(self, task: Task) -> RenderableType:
        return self.column.render(task) if task.fields.get("overall") else Text("")


class BarProgress:
    """A rich progress bar (done/total, elapsed, ETA) with one line per running instance (turns, tokens)."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            _OverallOnly(BarColumn()),
            _OverallOnly(MofNCompleteColumn()),
            TimeElapsedColumn(),
            _OverallOnly(TextColumn("ETA")),
            _OverallOnly(TimeRemainingColumn()),
            console=self.console,
        )
        self.overall: TaskID | None = None
        self.rows: dict[str, TaskID] = {}

    def start(self, total: int, skipped: int, workers: int) -> None:
        self.bar.start()
        if skipped:
            self.console.print(
                f"{skipped} instances already have predictions; {total} to run, {workers} at a time"
            )
        self.overall = self.bar.add_task("instances", total=total, overall=True)

    def instance_started(self, instance_id: str) -> None:
        self.rows[instance_id] = self.bar.add_task(f"  {instance_id}: checkout", total=None)

    def instance_update(self, instance_id: str, turns: int, tokens: int) -> None:
        row = self.rows.get(instance_id)
        if row is not None:
            doing = f"turn {turns}, {tokens / 1000:.1f}k tokens" if turns else "running"
            self.bar.update(row, description=f"  {instance_id}: {doing}")

    def instance_finished(self, instance_id: str, record: dict[str, Any]) -> None:
        row = self.rows.pop(instance_id, None)
        if row is not None:
            self.bar.remove_task(row)
        style = STATUS_STYLE.get(str(record.get("status")), "")
        self.console.print(Text(f"{instance_id}  ", style="bold") + Text(describe(record), style=style))
        if self.overall is not None:
            self.bar.advance(self.overall)

    def finish(self) -> None:
        for row in self.rows.values():
            self.bar.remove_task(row)
        self.rows.clear()
        self.bar.stop()
