# Operation classification: what one tool call would do (read, write, shell, network, unknown) and where.
# Pure over values except path resolution, which follows symlinks on disk through kgent.tools.paths.

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from kgent.permissions import commands
from kgent.tools.paths import classify_path

Operation = Literal["read", "write", "shell", "network", "unknown"]
Scope = Literal["workspace", "outside"]

# Tool name → the verb of its reason; read tools touch nothing, write tools change the file at `path`.
READ_TOOLS: Final[Mapping[str, str]] = {
    "read": "reads",
    "grep": "searches",
    "find": "finds files in",
    "ls": "lists",
}
WRITE_TOOLS: Final[Mapping[str, str]] = {"write": "writes", "edit": "edits"}
FILE_TOOLS: Final = frozenset(READ_TOOLS) | frozenset(WRITE_TOOLS)
_PATH_OPTIONAL: Final = frozenset({"grep", "find", "ls"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Intent:
    """What a tool call would do and where, as the policy sees it; `paths` are workspace-relative or absolute."""

    tool: str
    operation: Operation
    scope: Scope
    paths: tuple[str, ...] = ()
    command: str | None = None
    protected: bool = False
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


def _unknown(tool: str, reason: str) -> Intent:
    return Intent(tool=tool, operation="unknown", scope="workspace", reason=reason)


def _classify_file_tool(tool: str, args: Mapping[str, Any], workspace: Path) -> Intent:
    raw = args.get("path")
    if raw is None and tool in _PATH_OPTIONAL:
        raw = "."
    if not isinstance(raw, str):
        return _unknown(tool, f"calls {tool} without a usable path")
    target = _resolve(workspace, raw)
    if target is None:
        return _unknown(tool, f"calls {tool} with a NUL byte in its path")
    reading = tool in READ_TOOLS
    if target.protected:
        reason = f"touches a protected file: {target.shown}"
    elif not target.inside:
        reason = f"{'reads' if reading else 'writes'} outside the workspace: {target.shown}"
    else:
        reason = f"{READ_TOOLS[tool] if reading else WRITE_TOOLS[tool]} {target.shown}"
    return Intent(
        tool=tool,
        operation="read" if reading else "write",
        scope="workspace" if target.inside else "outside",
        paths=(target.shown,),
        protected=target.protected,
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


def _classify_bash(args: Mapping[str, Any], workspace: Path) -> Intent:
    command = args.get("command")
    if not isinstance(command, str):
        return _unknown("bash", "calls bash without a command")
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
        tool="bash",
        operation=operation,
        scope="outside" if outside else "workspace",
        paths=tuple(t.shown for t in targets),
        command=command,
        protected=bool(protected),
        reason=reason,
    )


def classify(tool_name: str, args: Mapping[str, Any], workspace: Path) -> Intent:
    """Classify one tool call; never raises for odd arguments (they make the intent `unknown`)."""
    if tool_name in FILE_TOOLS:
        return _classify_file_tool(tool_name, args, workspace)
    if tool_name == "bash":
        return _classify_bash(args, workspace)
    if tool_name == "calculator":
        return Intent(
            tool=tool_name, operation="read", scope="workspace", reason="evaluates an arithmetic expression"
        )
    return _unknown(tool_name, f"calls a tool the policy does not know: {tool_name}")
