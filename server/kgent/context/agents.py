"""Sub-agents people define: Markdown files in `<workspace>/.kgent/agents/` and `<user config dir>/agents/` (the
format of Claude Code's `.claude/agents/*.md`: front matter with `name`, `description`, `tools`, `model`, and Kgent's
`mode`; the body is the sub-agent's instructions). The `task` tool's `agent` argument starts one (kgent.kernel
.subagents); the run's system prompt lists them (kgent.kernel.prompt). Found and read through the files gate exactly
as skills are (kgent.context.skills): a project's definition that links outside the workspace, to a secret, or has
several hard links is left out and named (`Skipped`); the user's may link anywhere but to a secret. Like skills, a
project's definitions are read whether or not the project is trusted: what they say can only narrow the calling
run (its tools, its mode), except `model`, which the kernel follows only for the user's and trusted projects'.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from kgent.context.instructions import Skipped
from kgent.context.skills import front_matter
from kgent.core.errors import ConfigError
from kgent.core.modes import Mode, normalize_mode
from kgent.core.paths import user_config_dir
from kgent.files import gate

FOLDER = "agents"
MAX_BYTES = 64 * 1024  # a definition larger than this is left out (named, `Skipped`)
MAX_DESCRIPTION = 1024  # characters, as skills; longer ones are cut
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
# "inherit" (Claude Code's word) and an empty value: the calling run's model.
_SAME_MODEL = ("", "inherit")
# Claude Code's tool names whose Kgent names are not the same word in lower case (`Read` is `read`, `LS` is `ls`).
TOOL_ALIASES: Final = {"glob": "find", "webfetch": "web_fetch", "todowrite": "todo_write"}

# Narrower means: lets fewer calls run on the mode's own say-so (without a person's answer or a rule a person made).
# The calls each mode runs unasked grow along this order — plan and ask run the same ones (ask merely lets more be
# asked instead of refused), auto adds workspace file writes, risk_based adds the commands that only create in the
# workspace, full runs everything — so of two modes the narrower is the one earlier here (docs/agents.md).
MODE_ORDER: Final[tuple[Mode, ...]] = ("plan", "ask", "auto", "risk_based", "full")

Source = Literal["project", "user"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentDefinition:
    """One definition. `tools` None: the definition does not restrict them (a `task` call's own `tools`, else the
    read-only default); `mode` None: the calling run's; `model` None: the calling run's."""

    name: str
    description: str
    path: str  # the .md file, absolute
    source: Source
    instructions: str  # the body, stripped
    tools: tuple[str, ...] | None = None
    mode: Mode | None = None
    model: str | None = None


def narrower(a: Mode, b: Mode) -> Mode:
    """The narrower of two modes (MODE_ORDER): a defined sub-agent runs in the narrower of its `mode` and its
    parent's, never wider than either on its own say-so."""
    return a if MODE_ORDER.index(a) <= MODE_ORDER.index(b) else b


def agent_dirs(workspace: Path, user_dir: Path | None) -> list[Path]:
    """Where definitions are looked for, the first finder of a name winning: the project's, then the user's."""
    dirs = [workspace / ".kgent" / FOLDER]
    if user_dir is not None:
        dirs.append(user_dir / FOLDER)
    return dirs


def discover(
    dirs: Sequence[Path], workspace: Path | None = None
) -> tuple[list[AgentDefinition], list[Skipped]]:
    """The definitions (`*.md`) in `dirs`, sorted by name — a name found twice keeps the first — and what was left
    out: files the gate refused and files that are no usable definition, each with the reason. A folder inside
    `workspace` is the project's, judged under it (nothing may lead outside); any other is the user's, judged
    under itself, its links free to lead anywhere but to a secret."""
    found: dict[str, AgentDefinition] = {}
    skipped: list[Skipped] = []
    for base in dirs:
        own = workspace is not None and _within(base, workspace)
        root = workspace if own and workspace is not None else base
        source: Source = "project" if own else "user"
        names, refused = gate.listing(root, base, outside_ok=not own)
        if refused is not None:
            skipped.append(Skipped(path=str(base), reason=refused.reason))
        for name in names:
            if not name.endswith(".md"):
                continue
            loaded = load(base / name, root=root, source=source)
            if isinstance(loaded, Skipped):
                skipped.append(loaded)
            elif loaded is not None and loaded.name not in found:
                found[loaded.name] = loaded
    return sorted(found.values(), key=lambda d: d.name), skipped


def defined(workspace: Path, user_dir: Path | None = None) -> tuple[list[AgentDefinition], list[Skipped]]:
    """The definitions for `workspace`: its own and those in the user's config dir (default: user_config_dir())."""
    return discover(agent_dirs(workspace, user_dir or user_config_dir()), workspace)


def load(path: Path, *, root: Path, source: Source) -> AgentDefinition | Skipped | None:
    """One definition; Skipped when the gate refuses the file or it is no usable definition (the reason says why);
    None when it is no regular file (a folder named `x.md`) or is gone."""
    try:
        raw, _ = gate.read_file(root, path, limit=MAX_BYTES, outside_ok=source == "user")
    except gate.Refused as refused:
        return None if refused.why == "not_regular" else Skipped(path=str(path), reason=refused.reason)
    except OSError:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Skipped(path=str(path), reason="it is not UTF-8 text")
    try:
        return parse(text, path=str(path.absolute()), source=source, default_name=path.stem)
    except ConfigError as bad:
        return Skipped(path=str(path), reason=bad.message)


def parse(text: str, *, path: str, source: Source, default_name: str) -> AgentDefinition:
    """A definition from its text; ConfigError names what is wrong (no description, a bad name or mode)."""
    head, body = _split(text)
    if head is None:
        raise ConfigError(
            "it has no front matter (a `---` line, `name:` / `description:` lines, a `---` line)"
        )
    meta = front_matter(head)
    name = meta.get("name", "").strip() or default_name
    if not _NAME.match(name):
        raise ConfigError(f"its name {name!r} is not lower-case letters, digits and '-' (at most 64)")
    description = " ".join(meta.get("description", "").split())[:MAX_DESCRIPTION]
    if not description:
        raise ConfigError("it has no `description` (the model picks a sub-agent by it)")
    mode: Mode | None = None
    if meta.get("mode", "").strip():
        try:
            mode = normalize_mode(meta["mode"])
        except ConfigError as e:
            raise ConfigError(f"its `mode`: {e.message}") from None
    model = meta.get("model", "").strip()
    return AgentDefinition(
        name=name,
        description=description,
        path=path,
        source=source,
        instructions=body.strip(),
        tools=_tool_list(meta["tools"]) if "tools" in meta else None,
        mode=mode,
        model=None if model.lower() in _SAME_MODEL else model,
    )


def resolve_tools(listed: Iterable[str], available: Iterable[str]) -> tuple[list[str], list[str]]:
    """A definition's tool names as this run names its tools — exact, else the same word in lower case or Claude
    Code's name for it (`Glob` is `find`) — and the names that match no tool of `available`."""
    here = list(available)
    names: list[str] = []
    unknown: list[str] = []
    for raw in listed:
        low = raw.lower()
        match = next((n for n in (raw, low, TOOL_ALIASES.get(low, "")) if n and n in here), None)
        if match is None:
            unknown.append(raw)
        elif match not in names:
            names.append(match)
    return names, unknown


def prompt_section(definitions: Sequence[AgentDefinition]) -> str:
    """The system prompt's "Sub-agents" section ('' without definitions)."""
    if not definitions:
        return ""
    lines = [
        "Sub-agents defined for this workspace: to hand a task to one, call the task tool with `agent` set to its "
        "name (it follows its own instructions; still give it the whole task in `prompt`). It gets the tools listed "
        "with it (`tools` may pick some of them, no others) and never more permissions than you have.",
    ]
    for d in definitions:
        limits = [f"tools: {', '.join(d.tools) or 'none'}"] if d.tools is not None else []
        limits += [f"mode: {d.mode}"] if d.mode is not None else []
        lines.append(f"- {d.name}: {d.description}" + (f" ({'; '.join(limits)})" if limits else ""))
    return "\n".join(lines)


def instructions_section(definition: AgentDefinition) -> str:
    """What a defined sub-agent's system prompt adds: who it is and its definition's body."""
    head = f"You are the sub-agent `{definition.name}`: {definition.description}"
    if not definition.instructions:
        return head
    return f"{head}\nYour instructions ({definition.path}):\n{definition.instructions}"


def _split(text: str) -> tuple[str | None, str]:
    """(the front matter with its `---` lines, the body); (None, text) without front matter."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            # A YAML list item at the left margin continues the key above it, as an indented one does.
            head = "".join(lines[: i + 1])
            return re.sub(r"(?m)^-(\s)", r"  -\1", head), "".join(lines[i + 1 :])
    return None, text


def _tool_list(value: str) -> tuple[str, ...]:
    """`read, grep`, `[read, grep]`, `["read", "grep"]` or a YAML list (`- read` lines) as names."""
    words = re.split(r"[\s,\[\]]+", value)
    return tuple(dict.fromkeys(w.strip("'\"") for w in words if w.strip("'\"-")))


def _within(path: Path, root: Path) -> bool:
    return os.path.abspath(path).startswith(os.path.abspath(root).rstrip(os.sep) + os.sep)
