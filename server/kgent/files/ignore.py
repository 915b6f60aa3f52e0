# Concept: gitignore-aware walking — the pure-Python stand-in for ripgrep's file discovery.
"""Glob matching, a small .gitignore reader and a directory walker that honours it (used when rg is absent)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob: `*` and `?` stay within a path segment, `**` crosses segments, `[...]` is a class."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        elif c == "{":
            j = pattern.find("}", i)
            if j < 0:
                out.append(re.escape(c))
            else:
                alts = pattern[i + 1 : j].split(",")
                out.append("(?:" + "|".join(glob_regex(a).pattern[4:-3] for a in alts) + ")")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("(?s:" + "".join(out) + r")\Z")


def glob_match(pattern: str, rel: str) -> bool:
    """Match like rg --glob: a pattern without '/' matches the file name, one with '/' the relative path."""
    pat = pattern.lstrip("/")
    if "/" not in pat.rstrip("/"):
        return glob_regex(pat).match(rel.rsplit("/", 1)[-1]) is not None
    return glob_regex(pat).match(rel) is not None


@dataclass(frozen=True, slots=True)
class _Rule:
    base: str  # directory of the .gitignore, relative to the walk root ("" for the root)
    regex: re.Pattern[str]
    anchored: bool
    negate: bool
    dir_only: bool


def _parse(text: str, base: str) -> list[_Rule]:
    rules: list[_Rule] = []
    for line in text.splitlines():
        line = line.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        line = line.removeprefix("\\")
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        rules.append(_Rule(base, glob_regex(line.lstrip("/")), anchored, negate, dir_only))
    return rules


class GitIgnore:
    """The .gitignore rules in force below a root (later rules win; `!` re-includes)."""

    def __init__(self) -> None:
        self.rules: list[_Rule] = []

    def load(self, directory: Path, base: str) -> None:
        """Add the rules of directory/.gitignore (base: that directory relative to the walk root)."""
        try:
            text = (directory / ".gitignore").read_text("utf-8", "replace")
        except OSError:
            return
        self.rules.extend(_parse(text, base))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether a root-relative posix path is ignored."""
        result = False
        for rule in self.rules:
            if rule.base and not rel.startswith(rule.base + "/"):
                continue
            if rule.dir_only and not is_dir:
                continue
            sub = rel[len(rule.base) + 1 :] if rule.base else rel
            target = sub if rule.anchored else sub.rsplit("/", 1)[-1]
            if rule.regex.match(target):
                result = not rule.negate
        return result


def walk_files(root: Path, *, ignore_from: Path | None = None) -> Iterator[str]:
    """Files under root (posix, root-relative, in path order, hidden included, .git and symlinks skipped).

    .gitignore files from `ignore_from` (an ancestor such as the workspace) down to root are honoured.
    """
    gi = GitIgnore()
    prefix = ""
    if ignore_from is not None and root != ignore_from and root.is_relative_to(ignore_from):
        parts = root.relative_to(ignore_from).parts
        for k in range(len(parts)):
            gi.load(ignore_from.joinpath(*parts[:k]), "/".join(parts[:k]))
        prefix = "/".join(parts)
    if root.is_file():
        yield root.name
        return
    yield from _walk(root, "", prefix, gi)


def _walk(directory: Path, rel: str, prefix: str, gi: GitIgnore) -> Iterator[str]:
    gi.load(directory, "/".join(p for p in (prefix, rel) if p))
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        child = f"{rel}/{entry.name}" if rel else entry.name
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        if entry.name == ".git" or gi.ignored(f"{prefix}/{child}" if prefix else child, is_dir):
            continue
        if entry.is_symlink():
            continue  # as rg without --follow: a link may lead out of the workspace
        if is_dir:
            yield from _walk(Path(entry.path), child, prefix, gi)
        elif entry.is_file():
            yield child
