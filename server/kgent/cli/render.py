"""Human-readable rendering of a run's events on a terminal (rich), and the JSON Lines form (`--json`)."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from kgent.core.events import (
    Event,
    InstructionsEvent,
    MessageDelta,
    MessageEnd,
    PermissionRequest,
    PermissionResolved,
    PlanEvent,
    QueueUpdate,
    RetryEvent,
    RunEnd,
    RunStart,
    SubRunEvent,
    ToolCallEvent,
    ToolUpdate,
    UserInput,
    event_to_dict,
)


def escape(text: str) -> str:
    """Text from the model, tools or paths, made safe to embed in rich markup (`[/x]` must print, not parse)."""
    from rich.markup import escape as rich_escape  # rich loads only for the human renderer

    return rich_escape(text)


def _clip(text: str, lines: int = 8) -> str:
    parts = text.rstrip("\n").splitlines()
    if len(parts) <= lines:
        return "\n".join(parts)
    return "\n".join(parts[:lines]) + f"\n… ({len(parts) - lines} more lines)"


def _one_line(text: str) -> str:
    """Text for a line of its own: its line breaks (and the whitespace around them) folded into one space."""
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


def usage_line(usage: dict[str, Any]) -> str:
    """A run's tokens and estimated cost on one line (the `usage` wire form in)."""
    read, write = usage.get("cacheReadTokens", 0), usage.get("cacheWriteTokens", 0)
    total_in = usage.get("inputTokens", 0) + read + write
    parts = [f"{read:,} from cache" if read else "", f"{write:,} to cache" if write else ""]
    cache = f" ({', '.join(p for p in parts if p)})" if read or write else ""
    cost = usage.get("cost")
    money = (
        f"cost ≈ ${cost['amount']:.4f}" if cost else "cost unknown: no price for this model (KGENT_PRICES)"
    )
    return f"tokens: {total_in:,} input{cache} · {usage.get('outputTokens', 0):,} output · {money}"


class JsonRenderer:
    """One JSON object per event, one per line."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def event(self, event: Event) -> None:
        self.out.write(json.dumps(event_to_dict(event), ensure_ascii=False) + "\n")
        self.out.flush()

    def note(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()


class HumanRenderer:
    """Streams text as it arrives; tools, approvals and the result as short styled lines."""

    def __init__(self, console: Any | None = None) -> None:
        from rich.console import Console

        class _Console(Console):
            def on_broken_pipe(self) -> None:
                """rich would exit the process (status 1): the terminal port stops the run instead."""
                self.quiet = True
                raise BrokenPipeError

        self.console = console or _Console(highlight=False, emoji=False)  # print text as it is
        self._in_text: str | None = None  # "text" | "thinking" while a delta run is open
        self._titles: dict[str, str] = {}
        self._agents: dict[str, str] = {}  # sub-agent run id → its name

    def _end_stream(self) -> None:
        if self._in_text is not None:
            self.console.print()
            self._in_text = None

    def note(self, obj: dict[str, Any]) -> None:
        self._end_stream()
        for key, value in obj.items():
            self.console.print(f"[dim]{escape(str(key))}:[/] {escape(str(value))}")

    def _sub(self, event: SubRunEvent) -> None:
        """A sub-agent's activity, indented under its task: its start and end, tool calls, approvals and their
        answers. Sub-agents side by side interleave here, so each event is one line that names its sub-agent: never
        wrapped by the console (the terminal may fold it), a title's own line breaks folded into spaces."""
        inner = event.event
        if isinstance(inner, RunStart):
            self._agents[event.run_id] = inner.agent or "sub-agent"
        name = escape(_one_line(self._agents.get(event.run_id, "sub-agent")))
        line: str | None = None
        match inner:
            case RunStart():
                line = f"  [bold blue]↳ {name}[/] [dim]started ({event.run_id})[/]"
            case ToolCallEvent() | PermissionRequest() | ToolUpdate(status="completed" | "failed"):
                key = f"{event.run_id}:{getattr(inner, 'tool_call_id', '')}"
                if isinstance(inner, ToolCallEvent):
                    self._titles[key] = inner.title
                    line = f"  [blue]{name}[/] [yellow]▶ {escape(_one_line(inner.title))}[/]"
                elif isinstance(inner, PermissionRequest):
                    title = escape(_one_line(inner.tool_call.title))
                    line = f"  [bold magenta]? {name} asks[/] ({inner.risk} risk): {title}"
                else:
                    mark = "[green]✓[/]" if inner.status == "completed" else "[red]✗[/]"
                    title = escape(_one_line(self._titles.get(key, inner.tool_call_id)))
                    line = f"  [blue]{name}[/]   {mark} {title}"
            case PermissionResolved():
                colour = "green" if inner.approved else "red"
                said = escape(_one_line(inner.label or ("allowed" if inner.approved else "denied")))
                why = ""
                if inner.reason and inner.reason != inner.label:
                    why = f" — {escape(_one_line(inner.reason))}"
                line = f"  [blue]{name}[/]   [{colour}]{said}[/]{why}"
            case RunEnd(result=end):
                line = f"  [bold blue]↳ {name}[/] [dim]{end.status} after {end.turns} turn(s)[/]"
                self._agents.pop(event.run_id, None)
            case _:
                pass
        if line is not None:
            self._end_stream()
            self.console.print(line, soft_wrap=True)

    def event(self, event: Event) -> None:
        c = self.console
        match event:
            case SubRunEvent():
                self._sub(event)
            case InstructionsEvent(files=files):
                self._end_stream()
                for f in files:
                    cut = " [yellow](cut at 32 KiB)[/]" if f.truncated else ""
                    c.print(f"[dim]instructions {f.change}:[/] {escape(f.path)} [dim]({f.source})[/]{cut}")
            case PlanEvent(entries=entries):
                self._end_stream()
                marks = {"completed": "[green]✓[/]", "in_progress": "[yellow]▸[/]", "pending": "○"}
                c.print("[bold]plan:[/]")
                for e in entries:
                    c.print(f"  {marks[e.status]} {escape(e.content)}")
            case MessageDelta(kind=kind, delta=delta):
                if self._in_text != kind:
                    self._end_stream()
                    self._in_text = kind
                    if kind == "thinking":
                        c.print("[dim italic]thinking:[/] ", end="")
                c.print(delta, end="", style="dim italic" if kind == "thinking" else None, markup=False)
            case RunStart():
                c.print(
                    f"[bold]kgent[/] run {event.run_id} · session {event.session_id} · "
                    f"{escape(event.provider)}/{escape(event.model)} · mode {event.mode}\n"
                    f"[dim]workspace {escape(event.workspace)}[/]"
                )
            case UserInput(text=text, source=source):
                self._end_stream()
                label = {"prompt": "you", "steer": "you (steer)", "follow_up": "you (follow-up)"}[source]
                c.print(f"[bold cyan]{label}:[/] ", end="")
                c.print(text, markup=False)
            case MessageEnd():
                self._end_stream()
            case ToolCallEvent():
                self._end_stream()
                self._titles[event.tool_call_id] = event.title
                c.print(f"[bold yellow]▶ {escape(event.title)}[/]")
            case ToolUpdate(status="completed" | "failed"):
                ok = event.status == "completed"
                mark = "[green]✓[/]" if ok else "[red]✗[/]"
                c.print(f"  {mark} {escape(self._titles.get(event.tool_call_id, event.tool_call_id))}")
                body = event.diff or event.output or ""
                if body:
                    c.print(_clip(body), style="dim", markup=False)
            case PermissionRequest():
                self._end_stream()
                call = event.tool_call
                c.print(
                    f"[bold magenta]? approval needed[/] ({event.risk} risk): {escape(call.title)}"
                    f" — {escape(event.reason)}"
                )
                command = call.command
                if command and f"Run `{command}`" != call.title:  # the title shows only a short first line
                    c.print(command, style="bold", markup=False)
                if call.preview is not None and call.preview.diff:
                    c.print(_clip(call.preview.diff, 30), markup=False)
            case PermissionResolved():
                colour = "green" if event.approved else "red"
                said = escape(event.label or ("allowed" if event.approved else "denied"))
                why = f" — {escape(event.reason)}" if event.reason and event.reason != event.label else ""
                c.print(f"  [{colour}]{said}[/]{why}")
            case RetryEvent():
                c.print(
                    f"[yellow]retry {event.attempt}/{event.max_attempts} in {event.delay_seconds:.1f}s:[/] "
                    f"{escape(event.error)}"
                )
            case QueueUpdate():
                pass
            case RunEnd(result=end):
                self._end_stream()
                style = {"settled": "green", "cancelled": "yellow", "failed": "red"}[end.status]
                c.print(f"[bold {style}]{end.status}[/] ({end.stop_reason}) after {end.turns} turn(s)")
                if end.error:
                    c.print(f"[red]error:[/] {escape(str(end.error.get('message')))}")
                if end.usage:
                    c.print(usage_line(end.usage), style="dim", markup=False)
                if end.changed_paths:
                    c.print("changed: " + ", ".join(end.changed_paths), markup=False)
                if end.patch:
                    from rich.syntax import Syntax

                    c.print(Syntax(end.patch, "diff", theme="ansi_dark", background_color="default"))
            case _:
                pass
