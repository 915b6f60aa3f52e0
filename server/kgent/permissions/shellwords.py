# Reading a bash command line the way bash would, as far as the command classifier needs: words with their
# quoting removed, simple commands split at control operators, and the first construct we do not follow.

from __future__ import annotations

import glob as _glob
from dataclasses import dataclass, field
from typing import Final

# `2>&1`-style duplications and redirections to /dev/null read and write no file: everything else is refused.
_HARMLESS_TARGETS: Final = frozenset({"/dev/null"})
_GLOB: Final = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Word:
    """One word after quote removal. `pattern` is the glob the shell would expand (quoted characters escaped), or
    None when nothing in it is an unquoted glob character; `tilde` marks an unquoted leading `~`."""

    text: str
    pattern: str | None = None
    tilde: bool = False
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Line:
    """A command line as simple commands (each a tuple of words). `problem` names the first construct the classifier
    does not follow (substitution, redirection to a file, a subshell…); `targets` are redirection targets."""

    commands: tuple[tuple[Word, ...], ...]
    problem: str | None = None
    targets: tuple[str, ...] = ()
    operators: tuple[str, ...] = field(default=())
    simple: tuple[Simple, ...] = ()


@dataclass(frozen=True, slots=True)
class Simple:
    """One simple command as Kgent runs it: its words, the redirections it keeps (`2>&1`, `>/dev/null` … as
    (fd, operator, target) in order) and the operator after it (`|`, `|&`, `&&`, `||`, `;`, or "" at the end)."""

    words: tuple[Word, ...]
    redirects: tuple[tuple[str, str, str], ...] = ()
    then: str = ""


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.commands: list[tuple[Word, ...]] = []
        self.current: list[Word] = []
        self.problem: str | None = None
        self.targets: list[str] = []
        self.operators: list[str] = []
        self.simple: list[Simple] = []
        self.redirects: list[tuple[str, str, str]] = []
        self._reset_word()

    def _reset_word(self) -> None:
        self.chars: list[str] = []
        self.pat: list[str] = []
        self.globbed = False
        self.tilde = False
        self.quoted = False
        self.started = False

    def refuse(self, why: str) -> None:
        if self.problem is None:
            self.problem = why

    def add(self, ch: str, *, quoted: bool) -> None:
        if not self.started and ch == "~" and not quoted:
            self.tilde = True
        self.started = True
        self.chars.append(ch)
        if quoted or ch not in _GLOB:
            self.pat.append(_glob.escape(ch) if ch in _GLOB or ch == "]" else ch)
        else:
            self.pat.append(ch)
            self.globbed = True

    def end_word(self) -> Word | None:
        if not self.started:
            return None
        word = Word(
            text="".join(self.chars),
            pattern="".join(self.pat) if self.globbed else None,
            tilde=self.tilde,
            quoted=self.quoted,
        )
        self._reset_word()
        return word

    def flush_word(self) -> None:
        word = self.end_word()
        if word is not None:
            self.current.append(word)

    def end_command(self, op: str) -> None:
        self.flush_word()
        if self.current:
            self.commands.append(tuple(self.current))
            self.simple.append(Simple(tuple(self.current), tuple(self.redirects), ";" if op == "\n" else op))
        elif self.redirects:
            self.refuse("a redirection without a command")
        elif op not in ("\n", ";", "") or self.operators and self.operators[-1] not in ("\n", ";"):
            self.refuse("a control operator without a command")
        self.current = []
        self.redirects = []
        if op:
            self.operators.append(op)

    def run(self) -> Line:
        s = self.s
        while self.i < len(s):
            ch = s[self.i]
            if ch in " \t":
                self.flush_word()
                self.i += 1
            elif ch in "\n\r":
                self.end_command("\n")
                self.i += 1
            elif ch == "#" and not self.started:
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end
            elif ch == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    self.refuse("an unbalanced quote")
                    break
                self.started = self.quoted = True
                for c in s[self.i + 1 : end]:
                    self.add(c, quoted=True)
                self.i = end + 1
            elif ch == '"':
                self._double_quoted()
            elif ch == "\\":
                if self.i + 1 >= len(s):
                    self.refuse("a trailing backslash")
                    break
                nxt = s[self.i + 1]
                if nxt != "\n":  # a line continuation joins the lines
                    self.quoted = True
                    self.add(nxt, quoted=True)
                self.i += 2
            elif ch == "$" or ch == "`":
                self.refuse("a substitution or expansion ($, `)")
                self.add(ch, quoted=False)
                self.i += 1
            elif ch in "|&;":
                self._control(ch)
            elif ch in "<>":
                self._redirect()
            elif ch in "(){}":
                self.refuse("a subshell, group or brace expansion")
                self.add(ch, quoted=False)
                self.i += 1
            else:
                self.add(ch, quoted=False)
                self.i += 1
        self.end_command("")
        return Line(
            tuple(self.commands), self.problem, tuple(self.targets), tuple(self.operators), tuple(self.simple)
        )

    def _double_quoted(self) -> None:
        s = self.s
        self.started = self.quoted = True
        j = self.i + 1
        while j < len(s) and s[j] != '"':
            c = s[j]
            if c == "\\" and j + 1 < len(s) and s[j + 1] in '$`"\\\n':
                if s[j + 1] != "\n":
                    self.add(s[j + 1], quoted=True)
                j += 2
                continue
            if c in "$`":
                self.refuse("a substitution or expansion ($, `)")
            self.add(c, quoted=True)
            j += 1
        if j >= len(s):
            self.refuse("an unbalanced quote")
        self.i = j + 1

    def _control(self, ch: str) -> None:
        s, i = self.s, self.i
        two = s[i : i + 2]
        if two in ("||", "&&", "|&"):
            op, width = two, 2
        elif two == "&>":
            self._redirect()
            return
        elif two == ";;":
            self.refuse("a case terminator")
            op, width = two, 2
        else:
            op, width = ch, 1
        if op == "&":
            self.refuse("a background job (&)")
        self.i = i + width
        self.end_command(op)

    def _redirect(self) -> None:
        s = self.s
        fd = ""
        if self.started and not self.quoted and "".join(self.chars).isdigit():
            fd = "".join(self.chars)
            self._reset_word()
        else:
            self.flush_word()
        j = self.i
        while j < len(s) and s[j] in "<>&|":
            j += 1
        op = s[self.i : j]
        self.i = j
        while self.i < len(s) and s[self.i] in " \t":
            self.i += 1
        start = self.i
        while self.i < len(s) and s[self.i] not in " \t\n\r;|&<>()":
            self.i += 1
        target = s[start : self.i]
        if "<" in op and op not in ("<&",):
            self.refuse(f"an input redirection ({fd}{op})")
        elif op in (">&", "<&") and (target.isdigit() or target == "-"):
            self.redirects.append((fd, op, target))  # 2>&1, >&2: duplicates a descriptor, touches no file
            return
        elif op in (">", ">>", "&>", "&>>", ">|") and target in _HARMLESS_TARGETS:
            self.redirects.append((fd, op, target))
            return
        else:
            self.refuse(f"a redirection to a file ({fd}{op} {target})".rstrip())
        if target:
            self.targets.append(target)


def lex(command: str) -> Line:
    """Split a command line into simple commands of words, as bash would (without running any expansion)."""
    return _Lexer(command).run()
