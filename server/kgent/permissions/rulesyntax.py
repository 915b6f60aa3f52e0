# The rule syntax of the files, the CLI and the wire: `tool(spec)` or a bare tool name, and what one rule covers.
#
#   bash(npm test)        exactly that command (Kgent's parse: the same words)
#   bash(npm test *)      `npm test` followed by any arguments (Claude Code's `npm test:*` is read the same way)
#   edit(src/**)          a glob on workspace-relative paths; an absolute path or `~/…` names files outside
#   web_fetch(docs.python.org)   a host
#   mcp__git__git_status  every call of that tool
#
# A command rule is a prefix of words on Kgent's own parse of the command (shellwords: the words bash would pass);
# a compound command is covered when each of its simple commands is. Interpreters, shells and programs that run
# other programs only ever get exact rules: a prefix would allow any code.

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal

from kgent.files.ignore import glob_regex  # the same globs as grep/find's
from kgent.permissions import commands, shellwords
from kgent.permissions.intent import Intent

Decision = Literal["allow", "deny"]
RuleScope = Literal["session", "project", "user"]


class RuleError(ValueError):
    """A rule that cannot be read; the message says what is wrong with it."""


# Programs whose arguments are code or another command: a rule for them is only ever the exact command line.
INTERPRETERS: Final = frozenset(
    {
        "python",
        "python2",
        "python3",
        "pypy",
        "pypy3",
        "node",
        "nodejs",
        "deno",
        "bun",
        "ruby",
        "perl",
        "php",
        "lua",
        "luajit",
        "Rscript",
        "julia",
        "java",
        "osascript",
        "tclsh",
        "bash",
        "sh",
        "zsh",
        "dash",
        "ksh",
        "fish",
        "csh",
        "tcsh",
        "pwsh",
        "powershell",
        "env",
        "npx",
        "bunx",
        "pnpx",
        "uvx",
        "pipx",
        "sudo",
        "doas",
        "su",
        "xargs",
        "exec",
        "eval",
        "source",
        ".",
        "command",
        "builtin",
        "nohup",
        "timeout",
        "time",
        "nice",
        "ionice",
        "stdbuf",
        "watch",
        "strace",
        "ltrace",
        "gdb",
        "find",
        "sed",
        "awk",
        "gawk",
        "mawk",
        "nawk",
        "tar",
        "ssh",
        "sqlite3",
    }
)
_PYTHON_RE: Final = re.compile(r"python[0-9.]*|pypy[0-9.]*")
# `tool sub` pairs that run another program or code: exact rules only (`uv run pytest`, `npm exec`, `git config`).
RUNNERS: Final = frozenset(
    {
        ("uv", "run"),
        ("uv", "tool"),
        ("poetry", "run"),
        ("pdm", "run"),
        ("hatch", "run"),
        ("rye", "run"),
        ("pipenv", "run"),
        ("conda", "run"),
        ("npm", "exec"),
        ("npm", "x"),
        ("pnpm", "exec"),
        ("pnpm", "dlx"),
        ("yarn", "dlx"),
        ("yarn", "exec"),
        ("bundle", "exec"),
        ("go", "run"),
        ("cargo", "run"),
        ("git", "config"),
        ("git", "submodule"),
        ("git", "bisect"),
        ("git", "filter-branch"),
        ("docker", "run"),
        ("docker", "exec"),
        ("kubectl", "exec"),
    }
)
# Programs whose second word is a subcommand (how many words deep: `npm run test`, `gh pr view`, `docker compose up`).
SUBCOMMANDS: Final[dict[str, int]] = {
    "git": 1,
    "npm": 1,
    "pnpm": 1,
    "yarn": 1,
    "cargo": 1,
    "go": 1,
    "uv": 1,
    "pip": 1,
    "pip3": 1,
    "poetry": 1,
    "pdm": 1,
    "hatch": 1,
    "rye": 1,
    "docker": 2,
    "podman": 2,
    "kubectl": 1,
    "helm": 1,
    "gh": 2,
    "glab": 2,
    "dotnet": 1,
    "mvn": 1,
    "gradle": 1,
    "rustup": 1,
    "brew": 1,
    "apt": 1,
    "apt-get": 1,
    "systemctl": 1,
    "ruff": 1,
    "just": 1,
    "terraform": 1,
    "conda": 1,
    "mix": 1,
    "bundle": 1,
    "rake": 1,
    "composer": 1,
    "swift": 1,
    "zig": 1,
    "pre-commit": 1,
    "make": 1,
}
_RUN_SCRIPT: Final = frozenset(
    {"run", "run-script"}
)  # `npm run test`: the script's name is part of the prefix
_SUBCOMMAND_RE: Final = re.compile(r"[a-z][a-z0-9_:-]{0,31}")
_TOOL_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,127}")
_RULE_RE: Final = re.compile(r"(?P<tool>[^\s()]+)(?:\((?P<spec>.*)\))?", re.DOTALL)
_HOST_RE: Final = re.compile(
    r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*"
)
_GLOB_CHARS: Final = frozenset("*?[")
_KEYWORDS: Final = frozenset({"do", "then", "else", "elif", "if", "while", "until", "!", "{", "time"})

# Built-in tools and what their spec is; any other tool's spec is read by what its calls are (the intent's subject).
COMMAND_TOOLS: Final = frozenset({"bash"})
PATH_TOOLS: Final = frozenset({"read", "write", "edit", "ls", "find", "grep", "search"})
HOST_TOOLS: Final = frozenset({"web_fetch"})


def runs_code(words: tuple[str, ...]) -> bool:
    """True when the command's first words run code or another program: only an exact rule can cover it."""
    if not words:
        return True
    name = words[0]
    if name in INTERPRETERS or _PYTHON_RE.fullmatch(name) or "/" in name:
        return True
    return len(words) > 1 and (name, words[1]) in RUNNERS


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: `tool` and `spec` (None: every call of the tool), allow or deny. For a command, `words` is the
    prefix (with `prefix` True, `*` in the syntax) or the exact words. `outside` / `protected` (session rules made
    from an answer only): the call answered reached that far, so the rule may too."""

    tool: str
    spec: str | None
    allow: bool
    outside: bool = False
    protected: bool = False

    @property
    def decision(self) -> Decision:
        return "allow" if self.allow else "deny"

    @property
    def text(self) -> str:
        """The rule in the file syntax."""
        return self.tool if self.spec is None else f"{self.tool}({self.spec})"

    # -- commands ---------------------------------------------------------------------------------------------------
    @property
    def command(self) -> tuple[tuple[str, ...], bool] | None:
        """For a command spec: (words, prefix); None when the spec is not one simple command."""
        return _command_spec(self.spec) if self.spec is not None else None

    def covers_words(self, words: tuple[str, ...]) -> bool:
        """True when this command rule speaks for one simple command's words."""
        spec = self.command
        if spec is None:
            return False
        prefix, open_ended = spec
        if words[: len(prefix)] != prefix or (not open_ended and len(words) != len(prefix)):
            return False
        # a rule reaches the network only if its own words do (`npm install *` does, `git *` does not)
        return not (
            self.allow
            and commands.network_use(" ".join(words))
            and not commands.network_use(" ".join(prefix))
        )

    # -- paths and hosts --------------------------------------------------------------------------------------------
    def covers_path(self, path: str) -> bool:
        if self.spec is None:
            return True
        spec = self.spec
        if spec.startswith(("/", "~")) != path.startswith(("/", "~")):
            return False  # a workspace rule never speaks for a file outside, nor the other way round
        return glob_regex(spec).fullmatch(path) is not None

    def covers_host(self, host: str) -> bool:
        if self.spec is None:
            return True
        spec, host = self.spec.lower(), host.lower().rstrip(".")
        if spec.startswith("*."):
            return host.endswith(spec[1:])
        return host == spec

    def matches(self, intent: Intent) -> bool:
        """True when this rule speaks for the whole call (a deny: for any part of a compound command)."""
        if intent.tool != self.tool:
            return False
        if self.allow and not self._reaches(intent):
            return False
        if self.spec is None:
            return True
        if intent.subject == "command":
            if intent.command is None:
                return False
            if self.allow:
                segments = command_segments(intent.command)
                return segments is not None and all(self.covers_words(w) for w in segments)
            return any(self.covers_words(w) for w in loose_segments(intent.command))
        if intent.subject == "path":
            return bool(intent.paths) and self.covers_path(intent.paths[0])
        if intent.host is not None:
            return self.covers_host(intent.host)
        return False

    def _reaches(self, intent: Intent) -> bool:
        """An allow never reaches wider than its own words: outside paths, protected files (or a private address)."""
        literal = self.spec is not None and not (set(self.spec) & _GLOB_CHARS)
        if intent.scope == "outside" and not self.outside:
            if intent.subject == "path" and self.spec is not None and self.spec.startswith(("/", "~")):
                pass  # the rule names the outside path itself
            elif intent.operation == "network" and intent.subject != "command" and not intent.protected:
                pass  # the network is a URL tool's own place; a private address is `protected`
            else:
                return False
        if intent.protected and not self.protected:
            return intent.subject == "path" and literal  # only a rule naming the protected file itself
        return True


@lru_cache(maxsize=1024)
def _command_spec(spec: str) -> tuple[tuple[str, ...], bool] | None:
    text = spec.strip()
    if text.endswith(":*"):  # Claude Code's `npm test:*`
        text = text[:-2] + " *"
    line = shellwords.lex(text)
    if line.problem is not None or len(line.simple) != 1 or line.simple[0].redirects:
        return None
    words = tuple(w.text for w in line.simple[0].words)
    raw = line.simple[0].words
    if raw and raw[-1].text == "*" and not raw[-1].quoted:
        return words[:-1], True
    return words, False


def command_segments(command: str) -> tuple[tuple[str, ...], ...] | None:
    """The simple commands of a command line as words, for an allow; None when a rule cannot describe the line."""
    return None if segment_problem(command) else _segments(command)


def _segments(command: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(w.text for w in s.words) for s in shellwords.lex(command).simple)


def segment_problem(command: str) -> str | None:
    """Why no rule can be made for (or cover) this command line; None when each simple command can have one."""
    if not command.strip():
        return "the command is empty"
    line = shellwords.lex(command)
    if line.problem is not None:
        return f"the command has {line.problem}, which no rule can describe"
    for simple in line.simple:
        words = tuple(w.text for w in simple.words)
        if commands.strip_assignments(words) != words:
            name = words[0].partition("=")[0]
            return f"the command sets an environment variable ({name}=…), which no rule can describe"
    return None


def loose_segments(command: str) -> tuple[tuple[str, ...], ...]:
    """Every simple command a deny rule may speak for, read roughly when the line has constructs we do not follow."""
    line = shellwords.lex(command)
    found = [tuple(w.text for w in s.words) for s in line.simple] if line.problem is None else []
    for segment in commands.split_segments(command):
        words = commands.strip_assignments(segment)
        while words and words[0] in _KEYWORDS:  # `do rm $f`, `then rm x`: the command after the keyword
            words = commands.strip_assignments(words[1:])
        found.append(words)
    return tuple(f for f in found if f)


def parse_rule(text: object, decision: Decision = "allow") -> Rule:
    """Read one rule in the file syntax; RuleError says what is wrong."""
    if not isinstance(text, str):
        raise RuleError(f"a rule must be a string, got {type(text).__name__}")
    raw = text.strip()
    found = _RULE_RE.fullmatch(raw)
    if not raw or found is None:
        raise RuleError(f"{text!r} is not a rule: write tool(spec) or a tool name, e.g. bash(npm test *)")
    tool, spec = found.group("tool"), found.group("spec")
    if not _TOOL_RE.fullmatch(tool):
        raise RuleError(f"{text!r}: {tool!r} is not a tool name")
    allow = decision == "allow"
    if spec is None:
        return Rule(tool=tool, spec=None, allow=allow)
    spec = spec.strip()
    if not spec:
        raise RuleError(f"{text!r}: the parentheses are empty (write the bare tool name to cover every call)")
    if tool in COMMAND_TOOLS:
        return Rule(tool=tool, spec=_check_command(text, spec, allow=allow), allow=allow)
    if tool in HOST_TOOLS:
        if not _HOST_RE.fullmatch(spec):
            raise RuleError(f"{text!r}: {spec!r} is not a host name (e.g. docs.python.org or *.python.org)")
        return Rule(tool=tool, spec=spec.lower(), allow=allow)
    if "\0" in spec or "\n" in spec:
        raise RuleError(f"{text!r}: a path with a NUL byte or a newline")
    return Rule(tool=tool, spec=spec, allow=allow)


def _check_command(text: str, spec: str, *, allow: bool) -> str:
    parsed = _command_spec(spec)
    if parsed is None:
        problem = shellwords.lex(spec).problem
        raise RuleError(
            f"{text!r}: a command rule is one simple command"
            + (f" (this one has {problem})" if problem else " (no pipes, chains or redirections)")
        )
    words, prefix = parsed
    if not words:
        raise RuleError(
            f"{text!r}: a command rule needs a program (write `bash` alone to cover every command)"
        )
    if allow and prefix and runs_code(words):  # a deny may be as wide as it likes
        raise RuleError(
            f"{text!r}: {' '.join(words[:2])} runs code or other programs, so its rules are only exact commands"
            " (leave out the `*`)"
        )
    return " ".join([*(shellwords_quote(w) for w in words), *(["*"] if prefix else [])])


def shellwords_quote(word: str) -> str:
    """A word as the rule syntax writes it: plain when it can be, else single-quoted the way bash reads it."""
    if word and re.fullmatch(r"[A-Za-z0-9_@%+=:,./-]+", word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def command_rule(words: tuple[str, ...]) -> tuple[str, bool]:
    """The rule an 'always' answer makes for one simple command: (spec, prefix). A prefix of the program and its
    subcommand(s) (`git log *`, `npm run test *`, `grep *`), or the exact words for code runners."""
    if runs_code(words):
        return " ".join(shellwords_quote(w) for w in words), False
    depth = SUBCOMMANDS.get(words[0], 0)
    if depth and (len(words) == 1 or not _SUBCOMMAND_RE.fullmatch(words[1])):
        # options before the subcommand (`git -C dir …`) or none: only the exact command
        return " ".join(shellwords_quote(w) for w in words), False
    prefix = [words[0]]
    for word in words[1 : 1 + depth]:
        if not _SUBCOMMAND_RE.fullmatch(word):
            break
        prefix.append(word)
    if (
        len(prefix) == 2
        and prefix[1] in _RUN_SCRIPT
        and len(words) > 2
        and _SUBCOMMAND_RE.fullmatch(words[2])
    ):
        prefix.append(words[2])  # `npm run test`: the script's name, not any script
    return " ".join([*(shellwords_quote(w) for w in prefix), "*"]), True
