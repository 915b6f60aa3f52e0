# Pathname expansion as bash does it (no dotglob, nullglob, failglob, nocaseglob, globstar or extglob; `.` and `..`
# never matched), done by Kgent on the real workspace so that the words it judges are the words that run.

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Final

from kgent.files import gate

MAX_MATCHES: Final = 1000

_CLASSES: Final = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": r" \t\n\r\f\v",
    "blank": r" \t",
    "xdigit": "0-9A-Fa-f",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "word": "a-zA-Z0-9_",
}


class GlobError(ValueError):
    """A pattern Kgent does not expand (the command is then asked)."""


@lru_cache(maxsize=256)
def _translate(component: str) -> re.Pattern[str] | None:
    """A regex for one path component's pattern; None when it holds no unquoted glob character."""
    out: list[str] = []
    magic = False
    i, n = 0, len(component)
    while i < n:
        ch = component[i]
        i += 1
        if ch == "*":
            magic = True
            out.append("[^/]*")
        elif ch == "?":
            magic = True
            out.append("[^/]")
        elif ch == "[":
            end, body = _bracket(component, i)
            if end is None:
                out.append(re.escape("["))
                continue
            magic = True
            out.append(_bracket_regex(body, negate=component[i : i + 1] in ("!", "^")))
            i = end
        else:
            out.append(re.escape(ch))
    return re.compile("".join(out), re.DOTALL) if magic else None


def _bracket(s: str, i: int) -> tuple[int | None, list[tuple[str, str]]]:
    """Parse a bracket expression starting after `[`: (index after `]`, items) or (None, []) when unterminated."""
    items: list[tuple[str, str]] = []
    if s[i : i + 1] in ("!", "^"):
        i += 1
    first = True
    while i < len(s):
        ch = s[i]
        if ch == "]" and not first:
            return i + 1, items
        first = False
        if ch == "[" and s[i + 1 : i + 2] == ":":
            end = s.find(":]", i + 2)
            if end < 0:
                return None, []
            name = s[i + 2 : end]
            if name not in _CLASSES:
                raise GlobError(f"a character class bash knows and Kgent does not: [:{name}:]")
            items.append(("class", _CLASSES[name]))
            i = end + 2
            continue
        if ch == "[" and s[i + 1 : i + 2] in ("=", "."):
            raise GlobError("an equivalence class or collating symbol in a glob")
        if s[i + 1 : i + 2] == "-" and i + 2 < len(s) and s[i + 2] != "]":
            items.append(("range", ch + s[i + 2]))
            i += 3
            continue
        items.append(("lit", ch))
        i += 1
    return None, []


def _bracket_regex(items: list[tuple[str, str]], *, negate: bool) -> str:
    parts: list[str] = []
    for kind, value in items:
        if kind == "class":
            parts.append(value)
        elif kind == "range":
            if value[0] > value[1]:
                continue  # an empty range matches nothing
            parts.append(re.escape(value[0]) + "-" + re.escape(value[1]))
        else:
            parts.append(re.escape(value))
    body = "".join(parts)
    if negate:
        return f"[^/{body}]" if body else "[^/]"
    return f"[{body}]" if body else "(?!)"


def expand(pattern: str, cwd: str) -> list[str]:
    """The names bash's pathname expansion makes of `pattern` (quoted glob characters written `[*]`) run in `cwd`,
    sorted; empty when nothing matches (bash then keeps the word as it is). A name beginning with `.` is matched
    only by a component that begins with a literal `.`; a component followed by `/` matches directories only;
    brackets are read per component (bash does the same). Only directories physically inside `cwd` are listed: a
    glob through a link (or `..`) out of it matches nothing here, so no outside name is ever read (the word stays as
    it is, a path outside: asked)."""
    return sorted(_walk(pattern.split("/"), cwd))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _walk(parts: list[str], cwd: str) -> list[str]:
    root = os.path.realpath(cwd)
    prefixes = ["/"] if parts[0] == "" else [""]
    rest = parts[1:] if parts[0] == "" else parts
    for index, part in enumerate(rest):
        last = index == len(rest) - 1
        regex = _translate(part)
        next_prefixes: list[str] = []
        for prefix in prefixes:
            if regex is None:
                path = prefix + part
                if last or part == "" or os.path.isdir(os.path.join(cwd, path)):
                    next_prefixes.append(path if last else path + "/")
                continue
            directory = os.path.join(cwd, prefix) if prefix else cwd
            if not _inside(os.path.realpath(directory), root):
                continue
            try:  # listed only once physically inside (checked above), under the files gate's mark
                names = gate.names(directory)
            except OSError:
                continue
            for name in names:
                if name.startswith(".") and not part.startswith("."):
                    continue
                if not regex.fullmatch(name):
                    continue
                if not last and not os.path.isdir(os.path.join(directory, name)):
                    continue
                next_prefixes.append(prefix + name + ("" if last else "/"))
                if len(next_prefixes) > MAX_MATCHES:
                    raise GlobError(f"a glob matching more than {MAX_MATCHES} files")
        prefixes = next_prefixes
    has_glob = any(_translate(p) is not None for p in rest)
    if not has_glob:
        return []
    return [p for p in prefixes if os.path.lexists(os.path.join(cwd, p))]
