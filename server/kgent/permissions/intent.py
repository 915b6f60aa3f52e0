# Operation classification: what one tool call would do (read, write, shell, network, unknown) and where.
# Pure over values except path resolution, which follows symlinks on disk through kgent.files.paths.

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from kgent.files.configs import configures
from kgent.files.gitdir import outside_git_dir
from kgent.files.paths import classify_path
from kgent.permissions import commands
from kgent.sandbox.argv import Plan
from kgent.tools import tool_by_name
from kgent.tools.addresses import private_target, url_problem
from kgent.tools.base import Tool, ToolIntent

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
    plan: Plan | None = None  # a read-only command's argvs as judged: what runs when it runs unasked
    host: str | None = None  # a URL tool's host (what a `web_fetch(host)` rule matches)
    # the files the call may write that configure Kgent or run code later outside the sandbox (kgent.files.configs):
    # asked in every mode but full, and no allow rule covers them
    configures: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class _Target:
    shown: str
    inside: bool
    protected: bool


def _resolve(workspace: Path, raw: str, *, physical: bool = False) -> _Target | None:
    try:
        resolved = classify_path(workspace, raw, physical=physical)
    except ValueError:  # a NUL byte, for a classify_path that raises on it rather than calling it outside
        return None
    return _Target(shown=resolved.rel, inside=resolved.inside, protected=resolved.protected)


def _resolve_word(workspace: Path, word: str) -> _Target | None:
    if word.startswith("~"):  # the shell expands it to a home directory: treat as outside, whatever HOME is
        literal = _resolve(workspace, word, physical=True)
        return _Target(shown=word, inside=False, protected=literal is not None and literal.protected)
    return _resolve(workspace, word, physical=True)


def _resolve_path_word(workspace: Path, word: commands.PathWord) -> list[_Target] | str:
    """The file a path word of a read-only command names (words come expanded: a glob's matches are words of
    their own); or why the command is not a plain read after all."""
    if word.tilde:
        target = _resolve_word(workspace, "~" + word.text.removeprefix("~"))
        return [target] if target is not None else "a path with a NUL byte"
    text = word.text
    if word.maybe_revision and not os.path.lexists(os.path.join(workspace, text)):
        return [] if word.revisions_ok else f"git reads file contents from history (revision {text})"
    if word.files_only and os.path.isdir(os.path.join(workspace, text)):
        return f"git diff of a directory may show protected files' changes: {text}"
    target = _resolve(workspace, text, physical=True)
    return [target] if target is not None else "a path with a NUL byte"


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
    config = not reading and target.inside and configures(target.shown)
    if target.protected:
        reason = f"touches a protected file: {target.shown}"
    elif config:
        reason = f"writes a file that configures Kgent or runs code later outside the sandbox: {target.shown}"
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
        configures=(target.shown,) if config else (),
    )


def _bash_reason(operation: Operation, command: str, reading: commands.Reading) -> str:
    if operation == "network":
        return f"runs a command that uses the network: {commands.network_use(command)}"
    if operation == "read":
        return f"runs a read-only command: {' '.join(dict.fromkeys(reading.programs))}"
    if operation == "write":
        return (
            f"runs a command that only creates in the workspace: {' '.join(dict.fromkeys(reading.programs))}"
        )
    return f"runs a shell command ({reading.problem})" if command.strip() else "runs an empty shell command"


def _fallback_targets(command: str, workspace: Path) -> list[_Target]:
    """For a command that is not a plain read: every word that may name a file, to judge its scope and secrets."""
    targets: list[_Target] = []
    for segment in commands.split_segments(command):
        for word in commands.arguments(commands.strip_assignments(segment)):
            target = _resolve_word(workspace, word)
            if target is not None and target not in targets:
                targets.append(target)
    return targets


def _classify_bash(
    args: Mapping[str, Any], workspace: Path, *, tool: str = "bash", command_arg: str = "command"
) -> Intent:
    command = args.get(command_arg)
    if not isinstance(command, str):
        return _unknown(tool, f"calls {tool} without a command", "command")
    reading = commands.read_only(command, workspace)
    writing = False
    if reading.problem is not None:  # maybe it only creates directories or empty files in the workspace
        creating = commands.workspace_write(command, workspace)
        if creating.problem is None:
            reading, writing = creating, True
    targets: list[_Target] = []
    if reading.problem is None:
        for word in reading.paths:
            resolved = _resolve_path_word(workspace, word)
            if isinstance(resolved, str):
                reading = commands.Reading(problem=resolved, programs=reading.programs)
                break
            targets += [t for t in resolved if t not in targets]
    if reading.problem is not None:
        targets = _fallback_targets(command, workspace)
        writing = False
    if "git" in reading.programs:  # git reads its repository: where it physically is decides the scope
        repository = outside_git_dir(workspace, os.environ)
        if repository is not None:
            targets.append(_Target(shown=repository, inside=False, protected=False))
    operation: Operation = (
        "network"
        if commands.network_use(command)
        else "shell"
        if reading.problem is not None
        else "write"
        if writing
        else "read"
    )
    # A background command keeps running and serves later commands: it runs on the host's network (a sandbox's own
    # network namespace would be unreachable from the next command's), so it is asked as a network command.
    background = args.get("background") is True and operation != "network"
    if background:
        operation = "network"
    protected = [t.shown for t in targets if t.protected]
    outside = [t.shown for t in targets if not t.inside]
    # a command that may write (anything but a plain read) and names a configuration file, or a directory holding
    # one (`cp -r x .git`, `tee .mcp.json`, `> .vscode/tasks.json`)
    config = [] if operation == "read" else [t.shown for t in targets if t.inside and _configures_at(t.shown)]
    if protected:
        reason = f"touches a protected file: {protected[0]}"
    elif config:
        reason = f"runs a command that may write a file that configures Kgent or runs code later: {config[0]}"
    elif outside and operation == "read":
        reason = f"reads outside the workspace: {outside[0]}"
    elif outside:
        kind = "network command" if operation == "network" else "shell command"
        reason = f"runs a {kind} that reaches outside the workspace: {outside[0]}"
    elif background:
        reason = (
            "runs a command in the background, on the host's network (it keeps running; later commands reach what "
            f"it serves): {' '.join(command.split())[:80]}"
        )
    else:
        reason = _bash_reason(operation, command, reading)
    return Intent(
        tool=tool,
        operation=operation,
        scope="outside" if outside else "workspace",
        paths=tuple(t.shown for t in targets),
        command=command,
        protected=bool(protected),
        subject="command",
        reason=reason,
        plan=reading.plan if operation in ("read", "write") else None,
        configures=tuple(config),
    )


def _configures_at(rel: str) -> bool:
    """Whether a command naming `rel` may write configuration: `rel` is such a file, or a directory that holds
    them (`.git`), where a copy or an archive could put one."""
    return configures(rel) or rel.split("/")[0].lower() == ".git"


def _classify_url(tool: str, declared: ToolIntent, args: Mapping[str, Any]) -> Intent:
    """A call that reaches a URL: its host is resolved, and a private address (loopback, private ranges,
    link-local) is `protected` — asked in every mode but full, and not covered by an 'allow always' for public
    addresses."""
    assert declared.url_arg is not None
    url = args.get(declared.url_arg)
    if not isinstance(url, str):
        return _unknown(tool, f"calls {tool} without a URL")
    verb = declared.verb or "reaches"
    private = private_target(url) if url_problem(url) is None else None
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    if private is None:
        return Intent(
            tool=tool, operation="network", scope="outside", host=host or None, reason=f"{verb} {url}"
        )
    return Intent(
        tool=tool,
        operation="network",
        scope="outside",
        paths=(host,),
        host=host or None,
        protected=True,
        reason=f"{verb} a private network address ({host if host == private else f'{host} is {private}'}): {url}",
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
    if declared.effect == "network" and declared.url_arg is not None:
        return _classify_url(name, declared, args)
    if declared.effect == "network":
        return Intent(tool=name, operation="network", scope="outside", reason=f"uses the network: {name}")
    return _unknown(name, f"calls {name}, which declares no path or command the policy can check")


def _builtin_intent(name: str) -> ToolIntent | None:
    try:
        return tool_by_name(name).intent
    except KeyError:
        return None
