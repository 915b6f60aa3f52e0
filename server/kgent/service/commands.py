"""Slash commands: the team's prompt templates (Markdown files in `<workspace>/.kgent/prompts/` and the user config
dir's `prompts/`) and the built-ins — listed for the fronts (`agent/commands` and its `menu`, ACP's
`available_commands_update`), each with its `action` (what a front does with it: send it as a prompt, show the
server's answer, start a new session, open its rewind flow), and expanded at the start of a prompt, server-side, so
every front gets the same.

Pure over files: `commands()` reads the two folders, `menu()` says what a front's slash menu shows, `expand()` turns
a typed prompt into what the model is sent (or names the built-in to run), `help_text()` is `/help`'s answer;
nothing here starts a run or answers for a session (kgent.service.service does).
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kgent.ext.config import user_config_dir
from kgent.files import gate
from kgent.service.errors import INVALID_PARAMS, ServiceError
from kgent.service.review import review_files
from kgent.session.entries import SessionTree

Source = Literal["builtin", "project", "user", "extension"]
# What a front does with a command: `prompt` — send the typed text as agent/run's prompt (the server expands it);
# `answer` — ask agent/command and show its text (the server answers by itself: /help, /cost, /model, /mode);
# `newSession` — forget the conversation's session, the next prompt starts a new one (/clear); `rewind` — open the
# front's rewind flow (/rewind: pick a prompt of the session, files and conversation go back to before it).
Action = Literal["prompt", "answer", "newSession", "rewind"]
ACTIONS: tuple[Action, ...] = ("prompt", "answer", "newSession", "rewind")

MAX_TEMPLATE_BYTES = 256 * 1024  # a larger file is not a prompt: it is listed as unreadable, never sent
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_INVOCATION = re.compile(r"/([A-Za-z0-9][A-Za-z0-9_.-]*)(?:\s+(.*))?\Z", re.DOTALL)
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|@|[1-9])")


@dataclass(frozen=True, slots=True, kw_only=True)
class Command:
    """One slash command. `shadowed`: another command of the same name wins (a built-in over a template, a project
    template over a user one); it is listed so the user sees why theirs does not run."""

    name: str
    description: str
    source: Source
    argument_hint: str | None = None
    path: str | None = None
    body: str = ""
    shadowed: bool = False
    action: Action = "prompt"

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "action": self.action,
        }
        if self.argument_hint:
            out["argumentHint"] = self.argument_hint
        if self.path is not None:
            out["path"] = self.path
        if self.shadowed:
            out["shadowed"] = True
        return out


INIT_PROMPT = """\
Draft an AGENTS.md for this project: the instructions a coding agent needs before it changes anything here.

Explore first (list the top-level files, read the README, the build and test configuration, a few central \
modules). Then write `AGENTS.md` at the workspace root with short sections:
- what the project is and how the code is laid out (the main folders and what each holds);
- how to set it up, build it, run the tests (the exact commands) and lint/format it;
- the conventions the code follows (style, naming, error handling, test layout) as you observed them;
- anything an agent must not do (generated files, secrets, slow or destructive commands).
Keep it under about 150 lines, concrete and specific to this project; no generic advice. If an AGENTS.md exists
already, read it and improve it instead of starting over, keeping what is still true."""

REVIEW_PROMPT = """\
Review the changes of the last run in this session, shown below as hunks (path, line numbers, removed `-` and added \
`+` lines; the status says whether the user already accepted or rejected a hunk). Look for bugs, missed cases, \
broken callers, missing tests and anything that contradicts the project's conventions. Answer with a list of \
findings per file and line, most serious first, and say plainly when you find nothing wrong. Do not change any file \
unless the user asks you to."""

BUILTINS: tuple[Command, ...] = (
    Command(
        name="clear",
        description="Start a new session: your next prompt begins a fresh conversation (this one stays in History)",
        source="builtin",
        action="newSession",
    ),
    Command(
        name="compact",
        description="Compact the session's context now: a summary stands in for the older messages",
        source="builtin",
        argument_hint="[what the summary should focus on]",
    ),
    Command(
        name="cost",
        description="Show the tokens this session has used and what they cost",
        source="builtin",
        action="answer",
    ),
    Command(
        name="help",
        description="List the slash commands and what each does",
        source="builtin",
        action="answer",
    ),
    Command(
        name="init",
        description="Ask the model to draft an AGENTS.md for this project (its write is asked like any write)",
        source="builtin",
        argument_hint="[anything the file should cover]",
    ),
    Command(
        name="mode",
        description="Show or set the permission mode of this session's next runs",
        source="builtin",
        argument_hint="[plan|ask|auto|full|risk_based]",
        action="answer",
    ),
    Command(
        name="model",
        description="Show or set the model of this session's next runs",
        source="builtin",
        argument_hint="[model id]",
        action="answer",
    ),
    Command(
        name="review",
        description="Ask the model to review the changes of the session's last run",
        source="builtin",
        argument_hint="[what to look at]",
    ),
    Command(
        name="rewind",
        description="Go back to before one of this session's prompts: its files and the conversation",
        source="builtin",
        action="rewind",
    ),
)
_BUILTIN_NAMES = frozenset(c.name for c in BUILTINS)


@dataclass(frozen=True, slots=True, kw_only=True)
class MenuEntry:
    """One line of a front's slash menu, as the front shows it: `/name`, the argument hint, the description."""

    name: str
    description: str
    argument_hint: str | None = None
    action: Action = "prompt"

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"name": self.name, "description": self.description, "action": self.action}
        if self.argument_hint:
            out["argumentHint"] = self.argument_hint
        return out


def menu(listed: Iterable[Command]) -> list[MenuEntry]:
    """The slash menu of these commands: the ones that run (a shadowed template does not), in their order, a
    template's description followed by where it comes from (`(project)`, `(user)`)."""
    return [
        MenuEntry(
            name=c.name,
            description=c.description if c.source == "builtin" else f"{c.description} ({c.source})",
            argument_hint=c.argument_hint,
            action=c.action,
        )
        for c in listed
        if not c.shadowed
    ]


def help_text(listed: Iterable[Command]) -> str:
    """`/help`'s answer: one line per command of the menu, `/name hint — description`, and the escape."""
    lines = ["Slash commands (type them at the start of a prompt):"]
    for e in menu(listed):
        lines.append(f"/{e.name}{' ' + e.argument_hint if e.argument_hint else ''} — {e.description}")
    lines.append("Start a prompt with // to send text that begins with /.")
    return "\n".join(lines)


def builtin(name: str) -> Command | None:
    """The built-in command of this name, if any."""
    return next((c for c in BUILTINS if c.name == name), None)


def parse_template(text: str) -> tuple[dict[str, str], str]:
    """A template's front matter (`key: value` lines between `---` lines; quotes around a value dropped) and body."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    meta: dict[str, str] = {}
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return meta, "".join(lines[i + 1 :]).lstrip("\n")
        key, sep, value = line.partition(":")
        if sep and key.strip():
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            meta[key.strip().lower()] = value
    return {}, text  # no closing line: not front matter


def _first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()[:120]
    return ""


def _templates(folder: Path, source: Source, root: Path) -> list[Command]:
    """The templates of one folder, through the files gate under `root` (the workspace for the project's: a template
    that links outside it, to a secret or is hard-linked is never read; the user's own may link anywhere else)."""
    own = source == "user"
    names, _ = gate.listing(root, folder, outside_ok=own)
    found: list[Command] = []
    for name in names:
        path = folder / name
        if not name.endswith(".md") or not _NAME.fullmatch(path.stem) or not gate.is_file(root, path, own):
            continue
        try:
            raw, _ = gate.read_file(root, path, limit=MAX_TEMPLATE_BYTES, outside_ok=own)
            text: str | None = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            text = None
        if text is None:
            continue
        meta, body = parse_template(text)
        found.append(
            Command(
                name=path.stem,
                description=meta.get("description") or _first_line(body) or f"prompt template {path.stem}",
                source=source,
                argument_hint=meta.get("argument-hint") or meta.get("argument_hint") or None,
                path=str(path),
                body=body,
            )
        )
    return found


def project_prompts(workspace: Path) -> Path:
    return workspace / ".kgent" / "prompts"


def user_prompts(env: Mapping[str, str] | None = None) -> Path:
    return user_config_dir(env) / "prompts"


def commands(workspace: Path, env: Mapping[str, str] | None = None) -> list[Command]:
    """Every command for `workspace`: the built-ins, then the project's templates, then the user's; on a name clash
    the built-in wins over any template and a project template over a user one (the loser is listed, `shadowed`)."""
    out: list[Command] = list(BUILTINS)
    taken = set(_BUILTIN_NAMES)
    mine = user_prompts(env)
    templates = _templates(project_prompts(workspace), "project", workspace) + _templates(mine, "user", mine)
    for template in templates:
        shadowed = template.name in taken
        taken.add(template.name)
        out.append(
            template
            if not shadowed
            else Command(
                name=template.name,
                description=template.description,
                source=template.source,
                argument_hint=template.argument_hint,
                path=template.path,
                shadowed=True,
            )
        )
    return out


def substitute(body: str, args: str) -> str:
    """`$ARGUMENTS` and `$@`: the whole argument text; `$1`..`$9`: its words (shell-style quotes group words; a
    missing one is empty). A body with no placeholder gets the arguments appended as a paragraph of their own."""
    try:
        words = shlex.split(args)
    except ValueError:  # an unclosed quote: plain words
        words = args.split()
    if not _PLACEHOLDER.search(body):
        return body.rstrip("\n") + ("\n\n" + args if args else "")

    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        if key in ("ARGUMENTS", "@"):
            return args
        i = int(key) - 1
        return words[i] if i < len(words) else ""

    return _PLACEHOLDER.sub(sub, body)


@dataclass(frozen=True, slots=True, kw_only=True)
class Expansion:
    """What a typed prompt becomes. `command`: the slash command it invoked (None: sent as typed, an escape's
    first `/` dropped); `builtin`: set for `compact`, which is no prompt — the service runs the compaction."""

    text: str
    typed: str
    command: str | None = None
    args: str = ""
    builtin: Literal["compact"] | None = None


def invocation(text: str) -> tuple[str, str] | None:
    """(`name`, `args`) when `text` is a slash command: `/name` at its very start, then whitespace or the end.
    `//…` and a leading space are escapes; `/usr/bin/x …` is no command (no space after the name)."""
    m = _INVOCATION.match(text)
    if m is None:
        return None
    return m.group(1), (m.group(2) or "").strip()


def expand(
    text: str,
    workspace: Path,
    env: Mapping[str, str] | None = None,
    *,
    tree: SessionTree | None = None,
) -> Expansion:
    """The prompt the model is sent for the typed `text`. `tree`: the session (for `/review`).
    Raises ServiceError INVALID_PARAMS (`unknown_command`, with close names; `nothing_to_review`)."""
    if text.startswith("//"):
        return Expansion(text=text[1:], typed=text)
    call = invocation(text)
    if call is None:
        return Expansion(text=text, typed=text)
    name, args = call
    own = builtin(name)
    if own is not None and own.action != "prompt":
        raise ServiceError(
            INVALID_PARAMS,
            f"/{name} is no prompt: "
            + (
                "the server answers it (agent/command)"
                if own.action == "answer"
                else "the client does it (a new session)"
                if own.action == "newSession"
                else "the client does it (its rewind flow, agent/rewind)"
            ),
            "not_a_prompt",
            command=name,
            action=own.action,
        )
    if name == "compact":
        return Expansion(text=text, typed=text, command=name, args=args, builtin="compact")
    if name == "init":
        prompt = INIT_PROMPT + (f"\n\nThe user adds: {args}" if args else "")
        return Expansion(text=prompt, typed=text, command=name, args=args)
    if name == "review":
        return Expansion(text=review_prompt(tree, args), typed=text, command=name, args=args)
    live = {c.name: c for c in commands(workspace, env) if not c.shadowed and c.source != "builtin"}
    template = live.get(name)
    if template is None:
        known = sorted(set(live) | _BUILTIN_NAMES)
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join('/' + c for c in close)}?" if close else ""
        raise ServiceError(
            INVALID_PARAMS,
            f"unknown command /{name}{hint} (commands: {', '.join('/' + k for k in known)}; "
            "start the prompt with // or a space to send text that begins with /)",
            "unknown_command",
            command=name,
            suggestions=close,
        )
    return Expansion(text=substitute(template.body, args), typed=text, command=name, args=args)


def review_prompt(tree: SessionTree | None, focus: str) -> str:
    """`/review`'s prompt: REVIEW_PROMPT and the hunks of the active branch's last run that changed files, with
    the statuses agent/review gives them."""
    branch = tree.branch() if tree is not None else []
    entry = next((e for e in reversed(branch) if e.type == "review" and e.data.get("files")), None)
    if tree is None or entry is None:
        raise ServiceError(
            INVALID_PARAMS,
            "/review needs a session whose runs changed files: this branch has no changes to review",
            "nothing_to_review",
        )
    out = [REVIEW_PROMPT]
    if focus:
        out.append(f"The user asks you to look at: {focus}")
    for f in review_files(tree, str(entry.data.get("runId"))):
        what = " (created)" if f.created else " (deleted)" if f.deleted else ""
        lines = [f"--- {f.path}{what}"]
        for h in f.hunks:
            lines.append(
                f"@@ -{h.old_start},{len(h.old_lines)} +{h.new_start},{len(h.new_lines)} @@ [{f.status[h.id]}]"
            )
            lines += [f"-{x.rstrip(chr(10))}" for x in h.old_lines] + [
                f"+{x.rstrip(chr(10))}" for x in h.new_lines
            ]
        out.append("\n".join(lines))
    return "\n\n".join(out)
