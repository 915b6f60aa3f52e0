# Command-line options as a program's own parser reads them: GNU getopt_long's rules (long options abbreviated to
# any unique prefix, short flags combined, arguments glued or separate, options after operands) over option tables.

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

Arg = Literal["none", "required", "optional"]
# What an option's argument is: a plain value, a path the program reads, the pattern (then every operand is a path),
# or a file the patterns are read from (a path, and every operand is a path).
Role = Literal["value", "path", "pattern", "patternfile"]


@dataclass(frozen=True, slots=True)
class Option:
    """One option and its aliases (`-r`/`--recursive` share one Option); `allowed` False means asked."""

    name: str  # the first spelling in the table: how checks refer to it
    arg: Arg = "none"
    role: Role = "value"
    allowed: bool = True
    spellings: tuple[str, ...] = ()

    def called(self, given: str) -> str:
        """How a reason names the option as given: `--deref (--dereference-recursive)`, `-C (--compile)`."""
        full = max(self.spellings or (self.name,), key=len)
        return given if given == full else f"{given} ({full})"


@dataclass(frozen=True, slots=True)
class Table:
    """Every option a program has (allowed or not) by spelling: short letters and long names without dashes."""

    short: Mapping[str, Option]
    long: Mapping[str, Option]
    numeric: bool = False  # `-5` means a count (head, grep context, git log)
    permute: bool = True  # GNU: options may follow operands; POSIX programs stop at the first operand
    abbreviate: bool = True


def table(spec: str, *, numeric: bool = False, permute: bool = True, abbreviate: bool = True) -> Table:
    """Build a Table from a spec: whitespace-separated groups like `-A/--after-context=`, `--color/--colour[=]`,
    `-f/--file=patternfile`, `!-R/--dereference-recursive` (`!` marks an option that is asked, `=` a required argument,
    `[=]` an optional one, `=path` / `=pattern` / `=patternfile` the argument's role)."""
    short: dict[str, Option] = {}
    long: dict[str, Option] = {}
    for group in spec.split():
        allowed = not group.startswith("!")
        group = group.lstrip("!")
        arg: Arg = "none"
        role: Role = "value"
        if "[=]" in group:
            group, arg = group.replace("[=]", ""), "optional"
        elif "=" in group:
            group, _, kind = group.partition("=")
            arg, role = "required", (kind or "value")  # type: ignore[assignment]
        spellings = group.split("/")
        option = Option(name=spellings[0], arg=arg, role=role, allowed=allowed, spellings=tuple(spellings))
        for spelling in spellings:
            if spelling.startswith("--"):
                long[spelling[2:]] = option
            elif spelling.startswith("-") and len(spelling) == 2:
                short[spelling[1]] = option
            else:
                raise ValueError(f"bad option spelling {spelling!r} in {group!r}")
    return Table(short=short, long=long, numeric=numeric, permute=permute, abbreviate=abbreviate)


@dataclass(slots=True)
class Parsed:
    """What the words meant: options seen (with values), operands in order, or the first problem."""

    options: list[tuple[Option, str | None]] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    problem: str | None = None

    def has(self, *names: str) -> bool:
        return any(o.name in names for o, _ in self.options)

    def values(self, *names: str) -> list[str]:
        return [v for o, v in self.options if o.name in names and v is not None]


def resolve_long(tbl: Table, name: str) -> Option | None:
    """The option a `--name` means: an exact spelling, else the one option every spelling it abbreviates belongs to."""
    exact = tbl.long.get(name)
    if exact is not None or not tbl.abbreviate or not name:
        return exact
    matches = {id(o): o for spelling, o in tbl.long.items() if spelling.startswith(name)}
    return next(iter(matches.values())) if len(matches) == 1 else None


_END: Final = "--"


def parse(
    words: Sequence[str], tbl: Table, *, stop_at_operand: Callable[[str], bool] | None = None
) -> Parsed:
    """Parse a program's arguments (without the program name) the way getopt_long would."""
    out = Parsed()
    i = 0
    only_operands = False
    while i < len(words):
        word = words[i]
        i += 1
        if only_operands or word == "-" or not word.startswith("-"):
            out.operands.append(word)
            if not tbl.permute or (stop_at_operand is not None and stop_at_operand(word)):
                only_operands = True
            continue
        if word == _END:
            only_operands = True
            continue
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            option = resolve_long(tbl, name)
            if option is None:
                out.problem = f"an option it does not know or that is ambiguous: {word.partition('=')[0]}"
                return out
            if not option.allowed:
                out.problem = f"option {option.called(word.partition('=')[0])}"
                return out
            if option.arg == "none" and eq:
                out.problem = f"an argument to an option that takes none: {word}"
                return out
            if option.arg == "required" and not eq:
                if i >= len(words):
                    out.problem = f"option {word} without its argument"
                    return out
                value, i = words[i], i + 1
            out.options.append((option, value if (eq or option.arg == "required") else None))
            continue
        if tbl.numeric and word[1:].isdigit():
            out.options.append((Option(name="-NUM"), word[1:]))
            continue
        j = 1
        while j < len(word):
            letter = word[j]
            option = tbl.short.get(letter)
            if option is None:
                out.problem = f"an option it does not know: -{letter}"
                return out
            if not option.allowed:
                out.problem = f"option {option.called('-' + letter)}"
                return out
            if option.arg == "none":
                out.options.append((option, None))
                j += 1
                continue
            rest = word[j + 1 :]
            if rest or option.arg == "optional":
                out.options.append((option, rest or None))
            elif i < len(words):
                out.options.append((option, words[i]))
                i += 1
            else:
                out.problem = f"option -{letter} without its argument"
                return out
            break
    return out
