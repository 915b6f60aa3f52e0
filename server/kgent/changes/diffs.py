# Concept: diff rendering — unified text diffs and git-style per-file patches for previews and change reports.
"""Unified diffs with a/ b/ headers (or /dev/null), git-style file patches, and the first changed line."""

from __future__ import annotations

import difflib

_NO_EOL = "\\ No newline at end of file\n"


def unified_diff(rel: str, old: str | None, new: str | None, *, context: int = 3) -> str:
    """A unified diff of two texts; None means the file is absent on that side."""
    a = (old or "").splitlines(keepends=True)
    b = (new or "").splitlines(keepends=True)
    out: list[str] = []
    for line in difflib.unified_diff(
        a,
        b,
        "/dev/null" if old is None else f"a/{rel}",
        "/dev/null" if new is None else f"b/{rel}",
        n=context,
    ):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n" + _NO_EOL)
    return "".join(out)


def decode_text(data: bytes) -> str | None:
    """UTF-8 text, or None for binary data (a NUL byte in the first 8 KB or invalid UTF-8)."""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def file_patch(rel: str, old: bytes | None, new: bytes | None) -> str:
    """A `diff --git a/x b/x` section for one file; empty when nothing changed."""
    if old == new:
        return ""
    head = [f"diff --git a/{rel} b/{rel}\n"]
    if old is None:
        head.append("new file mode 100644\n")
    elif new is None:
        head.append("deleted file mode 100644\n")
    old_text = None if old is None else decode_text(old)
    new_text = None if new is None else decode_text(new)
    if (old is not None and old_text is None) or (new is not None and new_text is None):
        a = "/dev/null" if old is None else f"a/{rel}"
        b = "/dev/null" if new is None else f"b/{rel}"
        return "".join(head) + f"Binary files {a} and {b} differ\n"
    return "".join(head) + unified_diff(rel, old_text, new_text)


def first_changed_line(old: str, new: str) -> int | None:
    """1-based number (in `new`) of the first line that differs, or None when equal."""
    if old == new:
        return None
    a, b = old.split("\n"), new.split("\n")
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i + 1
    return min(len(a), len(b)) + (0 if len(b) < len(a) else 1)
