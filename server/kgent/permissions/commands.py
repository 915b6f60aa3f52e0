# Reading a bash command as text: words, simple-command segments, network use, read-only shape.
# Pure string functions; whether an argument leads outside the workspace is decided in intent.py.

from __future__ import annotations

import re
import shlex
from itertools import pairwise
from typing import Final

# `| & ; < > $ ` ( )` and newline: anything that chains, redirects or substitutes.
METACHARACTERS: Final = frozenset("|&;<>$`()\n\r")

# Characters the shell expands when unquoted (globs, braces): an expansion may name a protected file.
_EXPANSIONS: Final = frozenset("*?[{")

_CONTROL: Final = frozenset("|&;()")
_REDIRECT: Final = frozenset("<>")

_NETWORK_RE: Final = re.compile(
    r"(?<![\w.-])(?:curl|wget|ssh|scp|sftp|rsync|nc|ncat|netcat|telnet|ftp|socat)(?![\w.-])"
    r"|(?<![\w.-])git\s(?:[^\n;&|]*\s)?(?:clone|fetch|pull|push|ls-remote)(?![\w.-])"
    r"|(?<![\w.-])(?:pip[\d.]*|uv\s+pip|poetry|pipx)\s+(?:install|download|add)(?![\w.-])"
    r"|(?<![\w.-])uv\s+(?:add|sync|tool\s+install)(?![\w.-])"
    r"|(?<![\w.-])(?:npm|pnpm|yarn|bun)\s+(?:install|i|ci|add|publish)(?![\w.-])"
    r"|(?<![\w.-])npx(?![\w.-])"
    r"|(?<![\w.-])(?:apt|apt-get|brew|dnf|yum|apk)\s+(?:\S+\s+)*?(?:install|upgrade|update)(?![\w.-])"
    r"|(?<![\w.-])(?:cargo|gem|go)\s+(?:install|get)(?![\w.-])"
    r"|(?<![\w.-])docker\s+(?:pull|push|login)(?![\w.-])"
)

# First words whose plain use only reads; `git` counts only with one of _GIT_READS right after it.
# `rg` and `grep -r` never count (see is_recursive_search): they would read protected files below a directory.
READ_ONLY_COMMANDS: Final = frozenset(
    {"cat", "ls", "head", "tail", "wc", "grep", "rg", "find", "pwd", "echo", "git", "stat", "file", "tree"}
)
_GIT_READS: Final = frozenset({"status", "diff", "log", "show"})

# Options that make an otherwise read-only command run, delete or write something.
_FORBIDDEN_OPTIONS: Final[dict[str, frozenset[str]]] = {
    "find": frozenset(
        {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
    ),
    "tree": frozenset({"-o", "-R", "--output"}),
    "git": frozenset({"--output", "--ext-diff"}),
    "file": frozenset({"-C", "--compile"}),
}

_SUBCOMMAND_RE: Final = re.compile(r"[a-z][a-z0-9_-]{0,23}")
_ASSIGNMENT_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _lex(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: fall back to plain words, the command is not simple anyway
        return line.split()


def parses(command: str) -> bool:
    """False when the command has an unbalanced quote (the shell would refuse it; we read it only roughly)."""
    try:
        for line in command.splitlines():
            shlex.split(line)
    except ValueError:
        return False
    return True


def is_operator(token: str) -> bool:
    """True for a control or redirection operator token (`|`, `&&`, `;`, `>`, `2>&1`'s `>&` …)."""
    return bool(token) and set(token) <= (_CONTROL | _REDIRECT)


def split_segments(command: str) -> tuple[tuple[str, ...], ...]:
    """The simple commands of a command line, split at newlines and control operators; redirections stay in."""
    segments: list[tuple[str, ...]] = []
    for line in command.splitlines():
        current: list[str] = []
        for token in _lex(line):
            if is_operator(token) and set(token) <= _CONTROL:
                if current:
                    segments.append(tuple(current))
                current = []
            else:
                current.append(token)
        if current:
            segments.append(tuple(current))
    return tuple(segments)


def has_metacharacter(command: str) -> bool:
    """True when the command chains, redirects or substitutes (any of `| & ; < > $ ` ( )` or a newline)."""
    return any(ch in METACHARACTERS for ch in command)


def has_unquoted_expansion(command: str) -> bool:
    """True when a glob or brace character (`* ? [ {`) stands outside quotes, so the shell would expand it."""
    quote: str | None = None
    escaped = False
    for ch in command:
        if escaped:
            escaped = False
        elif quote is not None:
            if ch == quote:
                quote = None
            elif ch == "\\" and quote == '"':
                escaped = True
        elif ch == "\\":
            escaped = True
        elif ch in "'\"":
            quote = ch
        elif ch in _EXPANSIONS:
            return True
    return False


def network_use(command: str) -> str | None:
    """The part of the command that reaches the network (`curl`, `git push`, `pip install` …), or None."""
    found = _NETWORK_RE.search(command)
    return " ".join(found.group(0).split()) if found else None


def arguments(words: tuple[str, ...]) -> tuple[str, ...]:
    """The words of one simple command that may name files: operands, `--opt=value` values, redirect targets."""
    out: list[str] = []
    rest = words[2:] if words[:1] == ("git",) and len(words) > 1 else words[1:]
    options_done = False
    for word in rest:
        if is_operator(word) or not word:
            continue
        if options_done or not word.startswith("-") or word == "-":
            out.append(word)
            if word.startswith("@"):  # curl's `-d @file` and friends read the named file
                out.append(word[1:])
            if words[0] == "git" and ":" in word:  # `HEAD:path` names a file in history
                out.append(word.partition(":")[2] or ".")
        elif word == "--":
            options_done = True
        elif "=" in word:
            out.append(word.partition("=")[2])
    return tuple(w for w in out if w not in ("", "-"))


def is_recursive_search(words: tuple[str, ...]) -> bool:
    """True for `rg` and for `grep -r`/`-R`/`--recursive`: they read every file below a directory."""
    if not words:
        return False
    if words[0] == "rg":
        return True
    if words[0] != "grep":
        return False
    for before, word in pairwise(words):
        if word in ("--recursive", "--dereference-recursive", "--directories=recurse"):
            return True
        if before in ("-d", "--directories") and word == "recurse":
            return True
        if re.fullmatch(r"-[A-Za-z]+", word) and ("r" in word or "R" in word):
            return True
    return False


def is_read_only(words: tuple[str, ...]) -> bool:
    """True when one simple command, as words, is a plain read from READ_ONLY_COMMANDS (paths not checked here)."""
    if not words or words[0] not in READ_ONLY_COMMANDS:
        return False
    name = words[0]
    if name == "git" and (len(words) < 2 or words[1] not in _GIT_READS):
        return False
    forbidden = _FORBIDDEN_OPTIONS.get(name, frozenset())
    for word in words[1:]:
        if word == "--":
            break
        if not word.startswith("-"):
            continue
        flag = word.partition("=")[0]
        if flag in forbidden:
            return False
        if "=" not in word and any(part in word for part in ("/", "\\", "~", "..")):
            return False  # an option with a glued-on path (`-f/etc/x`): too clever to check, not plain
    return not is_recursive_search(words)


def strip_assignments(words: tuple[str, ...]) -> tuple[str, ...]:
    """The words after any leading `NAME=value` environment assignments."""
    i = 0
    while i < len(words) and _ASSIGNMENT_RE.match(words[i]):
        i += 1
    return words[i:]


def simple_words(command: str) -> tuple[str, ...] | None:
    """The words of a single simple command (no metacharacters, no leading `NAME=value`); otherwise None."""
    if has_metacharacter(command) or not parses(command):
        return None
    segments = split_segments(command)
    if len(segments) != 1 or strip_assignments(segments[0]) != segments[0]:
        return None
    return segments[0]


def rule_words(command: str) -> tuple[str, ...] | None:
    """For a simple command: its first word plus a subcommand-looking second word (`git status`, `pytest`).

    None for anything else; a leading `NAME=value` may hold a secret, and a compound command has no one prefix.
    """
    words = simple_words(command)
    if words is None:
        return None
    if len(words) > 1 and _SUBCOMMAND_RE.fullmatch(words[1]):
        return words[:2]
    return words[:1]
