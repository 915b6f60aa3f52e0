# The command classifier: whether a bash command only reads (deny by default: every word must be understood), which
# words name files, and whether it uses the network. Pure string functions; paths are resolved in intent.py.

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import Final

from kgent.permissions import gitcommands, globbing, shellwords
from kgent.permissions.globbing import GlobError
from kgent.permissions.options import Parsed, parse, table
from kgent.permissions.programs import (
    FIND_DENIED,
    FIND_OPTIONS,
    FIND_PATH_PRIMARIES,
    FIND_PRIMARIES,
    PROGRAMS,
    Program,
)
from kgent.sandbox.argv import Joint, Plan, Stage

# `| & ; < > $ ` ( )` and newline: anything that chains, redirects or substitutes.
METACHARACTERS: Final = frozenset("|&;<>$`()\n\r")

_CONTROL: Final = frozenset("|&;()")
_REDIRECT: Final = frozenset("<>")

_NETWORK_RE: Final = re.compile(
    r"(?<![\w.-])(?:curl|wget|ssh|scp|sftp|rsync|nc|ncat|netcat|telnet|ftp|socat)(?![\w.-])"
    r"|(?<![\w.-])git\s(?:[^\n;&|]*\s)?(?:clone|fetch|pull|push|ls-remote|submodule|remote\s+(?:update|prune|show))(?![\w.-])"
    r"|(?<![\w.-])(?:pip[\d.]*|uv\s+pip|poetry|pipx)\s+(?:install|download|add)(?![\w.-])"
    r"|(?<![\w.-])uv\s+(?:add|sync|tool\s+install)(?![\w.-])"
    r"|(?<![\w.-])(?:npm|pnpm|yarn|bun)\s+(?:install|i|ci|add|publish)(?![\w.-])"
    r"|(?<![\w.-])npx(?![\w.-])"
    r"|(?<![\w.-])(?:apt|apt-get|brew|dnf|yum|apk)\s+(?:\S+\s+)*?(?:install|upgrade|update)(?![\w.-])"
    r"|(?<![\w.-])(?:cargo|gem|go)\s+(?:install|get)(?![\w.-])"
    r"|(?<![\w.-])docker\s+(?:pull|push|login)(?![\w.-])"
)

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


# -- deny by default: is every word of the command understood as a read? -------------------------------------------


@dataclass(frozen=True, slots=True)
class PathWord:
    """A word the command reads as a file (after Kgent's own expansion: what the program will get). `tilde`: bash
    would read it as a home directory; `maybe_revision`: git takes it as a revision when no such file exists (then
    `revisions_ok` says if that is fine); `files_only`: a directory here would be asked."""

    text: str
    tilde: bool = False
    maybe_revision: bool = False
    revisions_ok: bool = True
    files_only: bool = False


@dataclass(frozen=True, slots=True)
class Reading:
    """The classifier's view of a command: `problem` is None when every word is understood as a read; `paths` are
    the words to resolve (each must lead to a non-protected file in the workspace); `programs` the commands run;
    `plan` the argvs exactly as judged, which is what runs when the command runs unasked (None with a tilde)."""

    problem: str | None
    paths: tuple[PathWord, ...] = ()
    programs: tuple[str, ...] = ()
    plan: Plan | None = None


def programs(command: str) -> tuple[str, ...]:
    """The first word of each simple command of a command line (as bash splits it)."""
    return tuple(words[0].text for words in shellwords.lex(command).commands if words)


def read_only(command: str, workspace: str | os.PathLike[str] | None = None) -> Reading:
    """Classify a command line: a read (problem None) only if every simple command is an allowlisted program with
    allowlisted options, no redirection to a file, no substitution, no subshell, no environment assignment.

    Words are split and unquoted once, here, and globs expanded against `workspace` as bash would (without a
    workspace a glob matches nothing and stays as it is); a name from a glob that begins with `-` is passed as
    `./-name`. The options and operands judged are the expanded words, and `plan` holds those same words: one
    parse, both judged and run."""
    return _judge(command, workspace, creating=False)


def _judge(command: str, workspace: str | os.PathLike[str] | None, *, creating: bool) -> Reading:
    """`read_only` and `workspace_write` in one pass: with `creating`, `mkdir` / `touch` (_WRITERS) are understood
    too, so a command that only creates in the workspace gets its plan from the same parse as a read."""
    if not command.strip():
        return Reading(problem="an empty command")
    line = shellwords.lex(command)
    progs = tuple(words[0].text for words in line.commands if words)
    if "\0" in command:
        return Reading(problem="a NUL byte in the command", programs=progs)
    if line.problem:
        return Reading(problem=line.problem, programs=progs)
    paths: list[PathWord] = []
    steps: list[tuple[Joint, tuple[Stage, ...]]] = []
    stages: list[Stage] = []
    joint: Joint = ""
    tilde = False
    for simple in line.simple:
        first = simple.words[0]
        if first.pattern is not None or first.tilde:
            return Reading(problem=f"a program named by a pattern: {first.text}", programs=progs)
        try:
            words = _expand(simple.words, workspace)
        except GlobError as e:
            return Reading(problem=str(e), programs=progs)
        writer = _WRITERS.get(first.text) if creating else None
        if writer is None:
            problem = _simple(words, paths)
        elif any(w.pattern is not None or w.tilde for w in simple.words):
            problem = f"{first.text} with a pattern or a home directory"
        else:
            problem = _program(first.text, writer, [w.text for w in words[1:]], _lookup(words[1:]), paths)
        if problem is None:
            redirects, problem = _redirects(simple.redirects)
        if problem:
            return Reading(problem=problem, programs=progs)
        tilde = tilde or any(w.tilde for w in words)
        stages.append(Stage(tuple(w.text for w in words), redirects, pipe_stderr=simple.then == "|&"))
        if simple.then not in ("|", "|&"):
            steps.append((joint, tuple(stages)))
            stages = []
            joint = "&&" if simple.then == "&&" else "||" if simple.then == "||" else ";"
    plan = None if tilde else Plan(tuple(steps))
    return Reading(problem=None, paths=tuple(paths), programs=progs, plan=plan)


def _expand(
    words: tuple[shellwords.Word, ...], workspace: str | os.PathLike[str] | None
) -> tuple[shellwords.Word, ...]:
    out: list[shellwords.Word] = []
    for word in words:
        matches = globbing.expand(word.pattern, os.fspath(workspace)) if word.pattern and workspace else []
        if not matches:
            out.append(shellwords.Word(text=word.text, tilde=word.tilde, quoted=word.quoted))
            continue
        if len(out) + len(matches) > globbing.MAX_MATCHES:
            raise GlobError(f"a glob matching more than {globbing.MAX_MATCHES} files: {word.text}")
        # a name that would be read as an option is passed so that it cannot be: `./-name`
        out += [shellwords.Word(text="./" + m if m.startswith("-") else m, quoted=True) for m in matches]
    return tuple(out)


def _redirects(
    given: tuple[tuple[str, str, str], ...],
) -> tuple[tuple[tuple[int, int | None], ...], str | None]:
    """The redirections Kgent wires itself (`2>&1`, `>&2`, `>/dev/null`, `2>/dev/null`, `&>/dev/null`), in order."""
    out: list[tuple[int, int | None]] = []
    for fd_text, op, target in given:
        fd = int(fd_text) if fd_text else 1
        if op in ("&>", "&>>"):
            out += [(1, None), (2, None)]
        elif fd not in (1, 2) or op == "<&" or (op == ">&" and target not in ("1", "2")):
            return (), f"a redirection Kgent does not wire itself ({fd_text}{op}{target})"
        elif op == ">&":
            out.append((fd, int(target)))
        else:
            out.append((fd, None))
    return tuple(out), None


def _lookup(words: tuple[shellwords.Word, ...]) -> dict[str, shellwords.Word]:
    by_text: dict[str, shellwords.Word] = {}
    for word in words:
        known = by_text.get(word.text)
        if known is None or word.tilde:
            by_text[word.text] = word
    return by_text


def _path(
    text: str,
    by_text: dict[str, shellwords.Word],
    *,
    maybe_revision: bool = False,
    revisions_ok: bool = True,
    files_only: bool = False,
) -> PathWord:
    word = by_text.get(text)
    # (part of a word — `--file=x`, `-fx` — is read literally by the program; `=~` is treated as a home directory)
    tilde = word.tilde if word is not None else (text.startswith("~") or "=~" in text)
    return PathWord(
        text=text,
        tilde=tilde or "=~" in text,
        maybe_revision=maybe_revision,
        revisions_ok=revisions_ok,
        files_only=files_only,
    )


def _simple(words: tuple[shellwords.Word, ...], out: list[PathWord]) -> str | None:
    first = words[0]
    name = first.text
    if _ASSIGNMENT_RE.match(name):
        return f"an environment assignment: {name.partition('=')[0]}=…"
    if "/" in name:
        return f"a program named by its path: {name}"
    args = words[1:]
    texts = [w.text for w in args]
    by_text = _lookup(args)
    if name == "git":
        return _git(texts, by_text, out)
    if name == "find":
        return _find(texts, by_text, out)
    program = PROGRAMS.get(name)
    if program is None:
        return f"{name}: not a program known to only read"
    if name in _INTERPRETERS and texts not in (["--version"], ["-V"]):
        return f"{name} runs code"
    return _program(name, program, texts, by_text, out)


def _program(
    name: str, program: Program, texts: list[str], by_text: dict[str, shellwords.Word], out: list[PathWord]
) -> str | None:
    tbl = program.table
    if program.operands == "text" and not tbl.short and not tbl.long:
        return None  # echo, printf, true, false: every word is text
    parsed: Parsed = parse(texts, tbl)
    if parsed.problem:
        return f"{name} with {parsed.problem}"
    if program.check is not None:
        problem = program.check(parsed)
        if problem:
            return problem
    operands = list(parsed.operands)
    pattern_given = False
    for option, value in parsed.options:
        if option.role in ("pattern", "patternfile"):
            pattern_given = True
        if option.role in ("path", "patternfile") and value is not None:
            out.append(_path(value, by_text))
    kind = program.operands
    if kind == "pattern" and not pattern_given:
        operands = operands[1:]
    elif kind == "program":
        operands = [o for o in operands[1:] if not _ASSIGNMENT_RE.match(o)]
    elif kind == "one-path" and len(operands) > 1:
        return f"{name} with a second operand, which it writes to"
    elif kind == "none" and operands:
        return f"{name} with operands it does not take"
    elif kind == "text":
        operands = []
    out.extend(_path(o, by_text) for o in operands)
    return None


def _git(texts: list[str], by_text: dict[str, shellwords.Word], out: list[PathWord]) -> str | None:
    reading = gitcommands.read_git(texts)
    if reading.problem:
        return reading.problem
    out.extend(_path(t, by_text, files_only=reading.files_only) for t in reading.paths)
    out.extend(
        _path(
            t, by_text, maybe_revision=True, revisions_ok=reading.revisions_ok, files_only=reading.files_only
        )
        for t in reading.maybe_paths
    )
    return None


_NEWER_RE: Final = re.compile(r"-newer[amcB][amcBt]")
_INTERPRETERS: Final = frozenset({"python", "python3"})


def _find(texts: list[str], by_text: dict[str, shellwords.Word], out: list[PathWord]) -> str | None:
    i = 0
    while i < len(texts) and texts[i] in FIND_OPTIONS:
        i += 1
    while i < len(texts) and not texts[i].startswith("-") and texts[i] not in ("(", "!", ")", ","):
        out.append(_path(texts[i], by_text))
        i += 1
    while i < len(texts):
        token = texts[i]
        i += 1
        if token in FIND_DENIED:
            return f"find with {token}, which runs, writes, deletes or follows links"
        if token in FIND_PATH_PRIMARIES or _NEWER_RE.fullmatch(token):
            if i >= len(texts):
                return f"find with {token} without its argument"
            if not token.endswith("t"):
                out.append(_path(texts[i], by_text))
            i += 1
            continue
        count = FIND_PRIMARIES.get(token)
        if count is None:
            return f"find with an expression it does not know: {token}"
        if i + count > len(texts):
            return f"find with {token} without its argument"
        i += count
    return None


# Programs that only create in the workspace: `mkdir` makes directories, `touch` makes empty files (or updates a
# time stamp). Any other option — `-m MODE`, `touch -r FILE`, `-d DATE` — is not understood and makes the command
# a plain shell command again.
_WRITERS: Final[dict[str, Program]] = {
    "mkdir": Program(table("-p/--parents -v/--verbose")),
    "touch": Program(table("-c/--no-create -a -m")),
}


def workspace_write(command: str, workspace: str | os.PathLike[str] | None = None) -> Reading:
    """Classify a command line that creates directories or empty files (`mkdir`, `touch`) and otherwise only reads:
    problem None only when every simple command is one of those or a read `read_only` understands, with at least
    one writer. `paths` are the words to resolve (each must lead to a non-protected path in the workspace); `plan`
    the argvs as judged, run unasked like a read's (one parse, both judged and run)."""
    progs = programs(command) if command.strip() else ()
    if not any(p in _WRITERS for p in progs):
        return Reading(problem="no command that only creates in the workspace", programs=progs)
    return _judge(command, workspace, creating=True)
