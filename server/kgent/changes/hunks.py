# Concept: hunks — a file's change cut into reviewable pieces, and reverting some of them where the text still allows.
"""Pure functions over text: `compute_hunks(before, after)` (a patience-style line diff, `changes`), `revert(current, hunks)` (with per-hunk conflicts) and
`reverse_patch(after, section)` (the text before a git patch section, for files a shell command changed).

A hunk is one contiguous change (difflib, no context merged in). It keeps up to CONTEXT unchanged lines on each side
of its new text — never lines of a neighbouring hunk, so reverting one hunk does not make its neighbour conflict.
Reverting finds the hunk's new text with its context in the current text (nearest to where it was); if it is not
there, the lines changed since: the hunk conflicts and nothing of it is touched.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CONTEXT = 3
SMALL_GAP = (
    250_000  # line pairs up to which a gap without anchors is left to difflib (quadratic) to cut finer
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Hunk:
    """One change. Starts are 1-based line numbers of the first line of the range; an empty range sits just before
    its start line (start = line count + 1 at the end of the file)."""

    id: str
    old_start: int
    old_lines: tuple[str, ...]  # with their line endings
    new_start: int
    new_lines: tuple[str, ...]
    before: tuple[str, ...] = ()  # unchanged lines just above the new text
    after: tuple[str, ...] = ()  # unchanged lines just below it
    at_start: bool = False  # the new text starts the file: it must still start it
    at_end: bool = False  # the new text ends the file: it must still end it

    @property
    def old_text(self) -> str:
        return "".join(self.old_lines)

    @property
    def new_text(self) -> str:
        return "".join(self.new_lines)

    def to_dict(self) -> dict[str, Any]:
        """The stored form (session entries)."""
        return {
            "id": self.id,
            "oldStart": self.old_start,
            "oldText": self.old_text,
            "newStart": self.new_start,
            "newText": self.new_text,
            "before": "".join(self.before),
            "after": "".join(self.after),
            "atStart": self.at_start,
            "atEnd": self.at_end,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Hunk:
        return cls(
            id=str(d["id"]),
            old_start=int(d["oldStart"]),
            old_lines=tuple(lines(d["oldText"])),
            new_start=int(d["newStart"]),
            new_lines=tuple(lines(d["newText"])),
            before=tuple(lines(d.get("before", ""))),
            after=tuple(lines(d.get("after", ""))),
            at_start=bool(d.get("atStart", False)),
            at_end=bool(d.get("atEnd", False)),
        )


def lines(text: str | None) -> list[str]:
    """Lines with their endings ("a\\nb" → ["a\\n", "b"])."""
    return text.splitlines(keepends=True) if text else []


def compute_hunks(before: str | None, after: str | None) -> list[Hunk]:
    """The hunks turning `before` into `after` (None: the file is absent), named h1, h2, … in order."""
    a, b = lines(before), lines(after)
    ops = changes(a, b)
    out: list[Hunk] = []
    for n, (i1, i2, j1, j2) in enumerate(ops):
        low = ops[n - 1][3] if n > 0 else 0  # context stops at the neighbour above…
        high = ops[n + 1][2] if n + 1 < len(ops) else len(b)  # …and below
        top, bottom = max(low, j1 - CONTEXT), min(high, j2 + CONTEXT)
        out.append(
            Hunk(
                id=f"h{n + 1}",
                old_start=i1 + 1,
                old_lines=tuple(a[i1:i2]),
                new_start=j1 + 1,
                new_lines=tuple(b[j1:j2]),
                before=tuple(b[top:j1]),
                after=tuple(b[j2:bottom]),
                at_start=j1 == 0,  # nothing above: it stays at the top
                at_end=j2 == len(b),  # nothing below: it stays at the end
            )
        )
    return out


Op = tuple[int, int, int, int]  # a[i1:i2] became b[j1:j2]


def changes(a: Sequence[str], b: Sequence[str]) -> list[Op]:
    """The changed ranges from `a` to `b`, in order, separated by unchanged lines. Patience-style: lines unique to
    both sides anchor the diff (their longest increasing run), difflib only fills the small gaps between anchors, and
    a large gap without anchors is one change — so a file with thousands of scattered edits costs milliseconds, not
    difflib's minutes."""
    out: list[Op] = []
    _diff(a, 0, len(a), b, 0, len(b), out)
    merged: list[Op] = []
    for op in out:  # adjacent pieces from neighbouring gaps form one change
        if merged and merged[-1][1] == op[0] and merged[-1][3] == op[2]:
            merged[-1] = (merged[-1][0], op[1], merged[-1][2], op[3])
        else:
            merged.append(op)
    return merged


def _diff(a: Sequence[str], i1: int, i2: int, b: Sequence[str], j1: int, j2: int, out: list[Op]) -> None:
    while i1 < i2 and j1 < j2 and a[i1] == b[j1]:
        i1, j1 = i1 + 1, j1 + 1
    while i1 < i2 and j1 < j2 and a[i2 - 1] == b[j2 - 1]:
        i2, j2 = i2 - 1, j2 - 1
    if i1 == i2 and j1 == j2:
        return
    if i1 == i2 or j1 == j2:
        out.append((i1, i2, j1, j2))
        return
    anchors = _anchors(a, i1, i2, b, j1, j2)
    if not anchors:
        if (i2 - i1) * (j2 - j1) > SMALL_GAP:
            out.append((i1, i2, j1, j2))  # no anchor in a large gap: one change
            return
        matcher = difflib.SequenceMatcher(None, a[i1:i2], b[j1:j2], autojunk=False)
        for tag, x1, x2, y1, y2 in matcher.get_opcodes():
            if tag != "equal":
                out.append((i1 + x1, i1 + x2, j1 + y1, j1 + y2))
        return
    for x, y in anchors:
        _diff(a, i1, x, b, j1, y, out)
        i1, j1 = x + 1, y + 1
    _diff(a, i1, i2, b, j1, j2, out)


def _anchors(a: Sequence[str], i1: int, i2: int, b: Sequence[str], j1: int, j2: int) -> list[tuple[int, int]]:
    """Lines that occur exactly once in a[i1:i2] and once in b[j1:j2], as the longest run increasing on both sides."""
    count_a: dict[str, int] = {}
    for i in range(i1, i2):
        count_a[a[i]] = count_a.get(a[i], 0) + 1
    count_b: dict[str, int] = {}
    where_b: dict[str, int] = {}
    for j in range(j1, j2):
        count_b[b[j]] = count_b.get(b[j], 0) + 1
        where_b[b[j]] = j
    pairs = [(i, where_b[a[i]]) for i in range(i1, i2) if count_a[a[i]] == 1 and count_b.get(a[i]) == 1]
    # Longest increasing subsequence of the b positions (patience sorting), kept in a order.
    tails: list[int] = []  # index into pairs of the smallest tail of each length
    prev: list[int] = [-1] * len(pairs)
    for k, (_, y) in enumerate(pairs):
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if pairs[tails[mid]][1] < y:
                lo = mid + 1
            else:
                hi = mid
        prev[k] = tails[lo - 1] if lo else -1
        if lo == len(tails):
            tails.append(k)
        else:
            tails[lo] = k
    run: list[tuple[int, int]] = []
    k = tails[-1] if tails else -1
    while k >= 0:
        run.append(pairs[k])
        k = prev[k]
    return run[::-1]


def _matches(text: list[str], i: int, h: Hunk) -> bool:
    """Whether `h`'s new lines sit at index `i` of `text`, framed by its context."""
    top, core_end = i - len(h.before), i + len(h.new_lines)
    end = core_end + len(h.after)
    if top < 0 or end > len(text):
        return False
    if h.at_start and top != 0 or h.at_end and end != len(text):
        return False
    return (
        text[top:i] == list(h.before)
        and text[i:core_end] == list(h.new_lines)
        and text[core_end:end] == list(h.after)
    )


def locate(text: list[str], h: Hunk) -> int | None:
    """The index in `text` where `h`'s new lines are, nearest to where they were; None when they are gone."""
    expected = min(max(h.new_start - 1, 0), len(text))
    for distance in range(len(text) + 1):
        for i in (expected - distance, expected + distance) if distance else (expected,):
            if 0 <= i <= len(text) and _matches(text, i, h):
                return i
    return None


def revert(current: str | None, hunks: Sequence[Hunk]) -> tuple[str, dict[str, bool]]:
    """`current` with each hunk's new lines put back to its old lines where they are still found; {id: reverted}.
    Hunks whose lines changed since (or overlap another hunk of the batch) are left alone (False)."""
    text = lines(current)
    found: list[tuple[int, Hunk]] = []
    result: dict[str, bool] = {}
    for h in hunks:
        at = locate(text, h)
        result[h.id] = at is not None
        if at is not None:
            found.append((at, h))
    found.sort(key=lambda f: f[0])
    for (a, ha), (b, hb) in zip(found, found[1:], strict=False):  # two hunks claiming the same lines
        if b < a + len(ha.new_lines) or (b == a and not ha.new_lines):
            result[ha.id] = result[hb.id] = False
    for at, h in reversed(found):
        if result[h.id]:
            text[at : at + len(h.new_lines)] = list(h.old_lines)
    return "".join(text), result


_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def patch_sections(patch: str) -> dict[str, str]:
    """A git patch split per file, in order: {workspace-relative path: its section} (the new path; the old one if
    deleted). Text that is not a file's section (a leading note) is kept under a key that is no path ("\0…"), so
    joining the values gives the patch back."""
    sections: dict[str, str] = {}
    for n, chunk in enumerate(re.split(r"(?m)^(?=diff --git )", patch)):
        if not chunk:
            continue
        old = re.search(r"(?m)^--- (?:a/(.*)|/dev/null)$", chunk)
        new = re.search(r"(?m)^\+\+\+ (?:b/(.*)|/dev/null)$", chunk)
        header = re.match(r"diff --git a/(.*) b/(.*)$", chunk.split("\n", 1)[0])
        path = (new.group(1) if new and new.group(1) else None) or (
            old.group(1) if old and old.group(1) else None
        )
        if path is None and header is not None:
            path = header.group(2)
        sections[path if path and chunk.startswith("diff --git ") else f"\0{n}"] = chunk
    return sections


def reverse_patch(after: str | None, section: str) -> tuple[str | None, str | None] | None:
    """(text before, text after) of one file's git patch section, from the text after it; None when the section is
    binary or does not fit `after` (then the change cannot be reviewed hunk by hunk)."""
    created = re.search(r"(?m)^--- /dev/null$", section) is not None
    deleted = re.search(r"(?m)^\+\+\+ /dev/null$", section) is not None
    body = section.split("\n")
    text = lines(after)
    out: list[str] = []
    pos = 0  # index in `text` up to which lines were copied to `out`
    i = 0
    seen = False
    last: str | None = None
    while i < len(body):
        m = _HUNK_HEADER.match(body[i])
        i += 1
        if m is None:
            continue
        seen = True
        new_start, new_count = int(m.group(3)), int(m.group(4) or "1")
        old_part: list[str] = []
        new_part: list[str] = []
        while i < len(body) and body[i][:1] in (" ", "-", "+", "\\"):
            line = body[i]
            i += 1
            if line.startswith("\\"):  # "\ No newline at end of file": the line above has no ending
                for part in (old_part, new_part):
                    if part and part[-1] is last:
                        part[-1] = part[-1][:-1]
                continue
            last = line[1:] + "\n"
            if line[0] in " -":
                old_part.append(last)
            if line[0] in " +":
                new_part.append(last)
        begin = new_start - 1 if new_count else new_start
        if text[begin : begin + len(new_part)] != new_part or begin < pos:
            return None
        out.extend(text[pos:begin])
        out.extend(old_part)
        pos = begin + len(new_part)
    if not seen and not (created or deleted):
        return None
    out.extend(text[pos:])
    return (None if created else "".join(out)), (None if deleted else after or "")
