# Concept: edit matching — locating oldText exactly or fuzzily (Pi's normalization) while keeping the file intact.
"""Find a unique occurrence of a snippet in text: exact first, then in a normalized space mapped back to the original."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

_QUOTES = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)


@dataclass(frozen=True, slots=True)
class Match:
    """Where the snippet sits in the original text, and how many (normalized) occurrences there are."""

    start: int
    end: int
    occurrences: int
    fuzzy: bool


def _norm_char(ch: str) -> str:
    if ch < "\x80":
        return ch
    return unicodedata.normalize("NFKC", ch).translate(_QUOTES)


def normalize_mapped(text: str) -> tuple[str, list[int]]:
    """Fuzzy form of `text` (per-char NFKC, ASCII quotes/dashes/spaces, no trailing whitespace per line).

    The list maps each output index to its source index in `text`, plus one end sentinel.
    """
    out: list[str] = []
    src: list[int] = []
    pos = 0
    lines = text.split("\n")
    for n, line in enumerate(lines):
        if line.isascii():
            kept = line.rstrip()
            out.append(kept)
            src.extend(range(pos, pos + len(kept)))
        else:
            norm = [(_norm_char(ch), pos + j) for j, ch in enumerate(line)]
            while norm and (not norm[-1][0] or norm[-1][0].isspace()):
                norm.pop()
            for chunk, origin in norm:
                out.append(chunk)
                src.extend([origin] * len(chunk))
        pos += len(line)
        if n < len(lines) - 1:
            out.append("\n")
            src.append(pos)
            pos += 1
    src.append(pos)
    return "".join(out), src


def normalize(text: str) -> str:
    """Fuzzy form of `text` without the index map."""
    return normalize_mapped(text)[0]


def find_unique(content: str, old: str) -> Match | None:
    """Locate `old` in `content`; None when absent. An exact match is counted exactly: text that occurs once as
    written is unique even when its normalized form occurs more often (`“x”` beside `"x"`). Only the fuzzy
    fallback counts in the fuzzy space, as Pi does."""
    exact = content.find(old)
    if exact >= 0:
        return Match(exact, exact + len(old), content.count(old), fuzzy=False)
    fuzzy_content, src = normalize_mapped(content)
    fuzzy_old = normalize(old)
    occurrences = fuzzy_content.count(fuzzy_old) if fuzzy_old else 0
    idx = fuzzy_content.find(fuzzy_old) if fuzzy_old else -1
    if idx < 0:
        return None
    end_src = src[idx + len(fuzzy_old) - 1] + 1 if fuzzy_old else src[idx]
    return Match(src[idx], end_src, occurrences, fuzzy=True)
