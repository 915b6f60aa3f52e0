# Operation classification: what one tool call would do (read, write, shell, network, unknown) and where.
# Pure over values except path resolution, which follows symlinks on disk through kgent.tools.paths.

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kgent.permissions import commands
from kgent.tools import tool_by_name
from kgent.tools.base import Tool, ToolIntent
from kgent.tools.paths import classify_path

Operation = Literal["read", "write", "shell", "network", "unknown"]
Scope = Literal["workspace", "outside"]
Subject = Literal["path", "command", "tool"]

@dataclass(frozen=True, slots=True, kw_only=True)
class Intent:
    """What a tool call would do and where, as the policy sees it; `paths` are workspace-relative or absolute."""

    tool: str
    operation: Operation
    scope: Scope
    paths: tuple[str, ...] = ()
    command: str | None = None
    protected: bool = False
    subject: Subject = "tool"  # what a remembered answer matches: the path, the command or the tool itself
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class _Target:
    shown: str
    inside: bool
    protected: bool


def _resolve(workspace: Path, raw: str) -> _Target | None:
    try:
        resolved = classify_path(workspace, raw)
    except ValueError:  # a NUL byte, for a classify_path that raises on it rather than calling it outside
        return None
    return _Target(shown=resolved.rel, inside=resolved.inside, protected=resolved.protected)


def _resolve_word(workspace: Path, word: str) -> _Target | None:
    if word.startswith("~"):  # the shell expands it to a home directory: treat as outside, whatever HOME is
        literal = _resolve(workspace, word)
        return _Target(shown=word, inside=False, protected=literal is not None and literal.protected)
    return _resolve(workspace, word)


def _unknown(tool: str, reason: str, subject: Subject = "tool") -> Intent:
    return Intent(tool=tool, operation="unknown", scope="workspace", subject=subject, reason=reason)


def _classify_file_tool(tool: str, declared: ToolIntent, args: Mapping[str, Any], workspace: Path) -> Intent:
    assert declared.path_arg is not None
    raw = args.get(declared.path_arg)
    if raw is None:
        raw = declared.default_path
    if not isinstance(raw, str):
        return _unknown(tool, f"calls {tool} without a usable path", "path")
    target = _resolve(workspace, raw)
    if target is None:
        return _unknown(tool, f"calls {tool} with a NUL byte in its path", "path")
    reading = declared.effect == "read"
    if target.protected:
        reason = f"touches a protected file: {target.shown}"
    elif not target.inside:
        reason = f"{'reads' if reading else 'writes'} outside the workspace: {target.shown}"
    else:
        reason = f"{declared.verb or ('reads' if reading else 'writes')} {target.shown}"
    return Intent(
        tool=tool,
        operation="read" if reading else "write",
        scope="workspace" if target.inside else "outside",
        paths=(target.shown,),
        protected=target.protected,
        subject="path",
        reason=reason,
    )


def _bash_operation(command: str, segments: tuple[tuple[str, ...], ...], resolvable: bool) -> Operation:
    if commands.network_use(command):
        return "network"
    if (
        resolvable
        and commands.parses(command)
        and len(segments) == 1
        and not commands.has_metacharacter(command)
        and not commands.has_unquoted_expansion(command)
        and commands.is_read_only(segments[0])
    ):
        return "read"
    return "shell"


def _bash_reason(operation: Operation, command: str, segments: tuple[tuple[str, ...], ...]) -> str:
    if operation == "network":
        return f"runs a command that uses the network: {commands.network_use(command)}"
    if operation == "read":
        words = segments[0]
        return f"runs a read-only command: {' '.join(words[:2] if words[0] == 'git' else words[:1])}"
    if len(segments) == 1 and commands.is_recursive_search(commands.strip_assignments(segments[0])):
        return "runs a recursive search, which may read protected files"
    return "runs a shell command" if segments else "runs an empty shell command"


def _classify_bash(
    args: Mapping[str, Any], workspace: Path, *, tool: str = "bash", command_arg: str = "command"
) -> Intent:
    command = args.get(command_arg)
    if not isinstance(command, str):
        return _unknown(tool, f"calls {tool} without a command", "command")
    segments = commands.split_segments(command)
    targets: list[_Target] = []
    resolvable = True
    for segment in segments:
        for word in commands.arguments(commands.strip_assignments(segment)):
            target = _resolve_word(workspace, word)
            if target is None:
                resolvable = False
            elif target not in targets:
                targets.append(target)
    operation = _bash_operation(command, segments, resolvable)
    protected = [t.shown for t in targets if t.protected]
    outside = [t.shown for t in targets if not t.inside]
    if protected:
        reason = f"touches a protected file: {protected[0]}"
    elif outside and operation == "read":
        reason = f"reads outside the workspace: {outside[0]}"
    elif outside:
        kind = "network command" if operation == "network" else "shell command"
        reason = f"runs a {kind} that reaches outside the workspace: {outside[0]}"
    else:
        reason = _bash_reason(operation, command, segments)
    return Intent(
        tool=tool,
        operation=operation,
        scope="outside" if outside else "workspace",
        paths=tuple(t.shown for t in targets),
        command=command,
        protected=bool(protected),
        subject="command",
        reason=reason,
    )


def classify(tool: str | Tool, args: Mapping[str, Any], workspace: Path) -> Intent:
    """Classify one call of `tool` (the tool itself, or a built-in tool's name) from the intent the tool declares;
    never raises for odd arguments (they make the intent `unknown`), and a tool that declares none is `unknown`."""
    if isinstance(tool, str):
        name, declared = tool, _builtin_intent(tool)
    else:
        name, declared = tool.name, getattr(tool, "intent", None)
    if not isinstance(declared, ToolIntent):
        return _unknown(name, f"calls a tool the policy does not know: {name}")
    if declared.effect == "execute" and declared.command_arg is not None:
        return _classify_bash(args, workspace, tool=name, command_arg=declared.command_arg)
    if declared.effect in ("read", "write") and declared.path_arg is not None:
        return _classify_file_tool(name, declared, args, workspace)
    if declared.effect in ("read", "think"):
        return Intent(tool=name, operation="read", scope="workspace", reason=declared.verb or f"runs {name}")
    if declared.effect == "network":
        return Intent(tool=name, operation="network", scope="outside", reason=f"uses the network: {name}")
    return _unknown(name, f"calls {name}, which declares no path or command the policy can check")


def _builtin_intent(name: str) -> ToolIntent | None:
    try:
        return tool_by_name(name).intent
    except KeyError:
        return None
