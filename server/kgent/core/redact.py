"""Secrets out of error texts: the one function every error message passes through (KgentError does it on creation).

What is removed: every API key Kgent was configured with (remembered when a ProviderConfig holds it), the values of
`Authorization` / `x-api-key` / `api_key`-like fields, bearer tokens, URL userinfo (`https://user:pass@host`), and
strings shaped like well-known vendor keys. Imports nothing of kgent.
"""

from __future__ import annotations

import re
import threading
from typing import Final

MASK: Final = "[redacted]"

_lock = threading.Lock()
_known: set[str] = set()

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
    """Redact `value` from every later error text (keys shorter than 8 characters would redact ordinary words)."""
    if value and len(value) >= 8:
        with _lock:
            _known.add(value)


def redact_url(url: str) -> str:
    """The URL without its userinfo (`https://user:pass@host/x` → `https://[redacted]@host/x`)."""
    return _USERINFO.sub(lambda m: f"{m.group(1)}{MASK}@", url)


def redact(text: str, *secrets: str | None) -> str:
    """`text` with every remembered secret, every secret given here and every secret-shaped part replaced."""
    if not text:
        return text
    with _lock:
        known = sorted(_known | {s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)
    for secret in known:
        if secret in text:
            text = text.replace(secret, MASK)
    text = redact_url(text)
    text = _FIELD.sub(lambda m: f"{m.group(1)}{MASK}", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    return _KEY_SHAPES.sub(MASK, text)
