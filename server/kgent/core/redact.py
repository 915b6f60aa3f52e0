"""Secrets out of error texts: the one function every error message passes through (KgentError does it on creation).

What is removed: every API key Kgent was configured with (remembered when a ProviderConfig holds it) — the whole key
and any fragment of it at least FRAGMENT characters long (a server that echoes the key without its `sk-` prefix, or
cut, still leaks nothing) —, the values of `Authorization` / `x-api-key` / `api_key`-like fields, bearer tokens, URL
userinfo (`https://user:pass@host`), and strings shaped like well-known vendor keys. Imports nothing of kgent.

Why FRAGMENT = 12: keys are random over ~64 symbols, so 11 characters shown of a 40+ character key leave more than
170 bits unknown (vendors' own dashboards show 4 to 8), while 12 characters of a key are very unlikely to occur in
an ordinary text by chance; the public prefixes of keys (`sk-proj-`, `sk-ant-api03-`) are shorter or barely longer
and are masked only when they run on into the key. A key shorter than FRAGMENT is masked whole only.

Speed: each key is cut once into aligned pieces of FRAGMENT // 2 characters (any FRAGMENT-long fragment contains one
whole piece); a text is searched for the pieces with str.find and each hit is grown to the longest run it shares with
the key around it — a few C-speed scans per key, no per-position work in Python.
"""

from __future__ import annotations

import re
import threading
from typing import Final

MASK: Final = "[redacted]"

FRAGMENT: Final = 12  # characters: any run of a known key at least this long is masked
_PIECE: Final = FRAGMENT // 2  # FRAGMENT >= 2 * _PIECE - 1: every FRAGMENT-long run holds an aligned piece

_lock = threading.Lock()
_known: set[str] = set()
# Built once per remembered key, read without the lock (each is replaced whole): the aligned pieces of the keys at
# least FRAGMENT long — (piece, key, offset) — and the shorter keys, longest first (masked whole).
_plan: tuple[tuple[str, str, int], ...] = ()
_short: tuple[str, ...] = ()

_USERINFO: Final = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@?#\"'<>]+@")
_FIELD: Final = re.compile(
    r"(?i)(\b(?:authorization|proxy-authorization|x-api-key|api[-_]?key|access[-_]?token|secret|password)"
    r"[\"']?\s*[:=]\s*[\"']?)(?:bearer\s+|basic\s+|token\s+)?[^\s\"',;}]+"
)
_BEARER: Final = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")
_KEY_SHAPES: Final = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{12,}|(?:ghp|gho|ghs|ghu|github_pat)_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{30,})"
)


def remember_secret(value: str | None) -> None:
    """Redact `value` — and any FRAGMENT-long run of it — from every later error text (keys shorter than 8
    characters would redact ordinary words)."""
    global _plan, _short
    if value and len(value) >= 8:
        with _lock:
            if value in _known:
                return
            _known.add(value)
            _plan = tuple(p for k in sorted(_known) for p in _pieces_of(k))
            _short = tuple(sorted((k for k in _known if len(k) < FRAGMENT), key=len, reverse=True))


def _pieces_of(key: str) -> tuple[tuple[str, str, int], ...]:
    """`key` cut into aligned pieces of _PIECE characters: (piece, key, offset); none for a key under FRAGMENT."""
    if len(key) < FRAGMENT:
        return ()
    return tuple((key[i : i + _PIECE], key, i) for i in range(0, len(key) - _PIECE + 1, _PIECE))


def _fragment_spans(text: str, plan: tuple[tuple[str, str, int], ...]) -> list[tuple[int, int]]:
    """Where runs of at least FRAGMENT characters of a key occur in `text` (start, end), maybe overlapping."""
    spans: list[tuple[int, int]] = []
    for piece, key, offset in plan:
        at = text.find(piece)
        while at != -1:
            left = 0
            while left < min(at, offset) and text[at - left - 1] == key[offset - left - 1]:
                left += 1
            right = _PIECE
            while (
                at + right < len(text)
                and offset + right < len(key)
                and text[at + right] == key[offset + right]
            ):
                right += 1
            if left + right >= FRAGMENT:
                spans.append((at - left, at + right))
            at = text.find(piece, at + 1)
    return spans


def _mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    out: list[str] = []
    end = 0
    for start, stop in sorted(spans):
        if stop <= end:
            continue
        if start > end:
            out.append(text[end:start])
            out.append(MASK)
        elif not out or out[-1] != MASK:
            out.append(MASK)
        end = stop
    out.append(text[end:])
    return "".join(out)


def redact_url(url: str) -> str:
    """The URL without its userinfo (`https://user:pass@host/x` → `https://[redacted]@host/x`)."""
    return _USERINFO.sub(lambda m: f"{m.group(1)}{MASK}@", url)


def _mask_keys(text: str, plan: tuple[tuple[str, str, int], ...], short: tuple[str, ...]) -> str:
    spans = _fragment_spans(text, plan)
    if spans:
        text = _mask_spans(text, spans)
    for secret in short:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_keys(text: str) -> str:
    """`text` with every remembered key — and any FRAGMENT-long run of one — masked, and nothing else: what a tool
    returns (a file read, a command's output) keeps the rest of its text exactly, so the model can still edit a
    file by its lines, while a key that a command printed (`/proc/$PPID/environ`, `env`) reaches no model request,
    event or session file."""
    plan, short = _plan, _short
    if not text or not (plan or short):
        return text
    return _mask_keys(text, plan, short)


def redact(text: str, *secrets: str | None) -> str:
    """`text` with every remembered secret, every secret given here and every secret-shaped part replaced."""
    if not text:
        return text
    plan, short = _plan, _short
    given = [x for x in secrets if x and len(x) >= 4 and x not in _known]
    if given:
        plan = plan + tuple(p for x in given for p in _pieces_of(x))
        short = tuple(sorted({*short, *(x for x in given if len(x) < FRAGMENT)}, key=len, reverse=True))
    text = _mask_keys(text, plan, short)
    text = redact_url(text)
    text = _FIELD.sub(lambda m: f"{m.group(1)}{MASK}", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    return _KEY_SHAPES.sub(MASK, text)
