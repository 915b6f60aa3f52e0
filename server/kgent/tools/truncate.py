# Concept: output truncation — Pi's head/tail limits (2000 lines / 50 KB, whichever is hit first) and size labels.
"""Head and tail truncation of tool output, with the bookkeeping the continuation notices need."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500


@dataclass(frozen=True, slots=True, kw_only=True)
class TruncationResult:
    """What survived truncation and why; counts are lines split on '\\n' and UTF-8 bytes."""

    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool = False
    first_line_exceeds_limit: bool = False
    max_lines: int = DEFAULT_MAX_LINES
    max_bytes: int = DEFAULT_MAX_BYTES

    def as_dict(self) -> dict[str, object]:
        """The result as JSON-ready camelCase details (Pi's field names)."""
        return {
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def format_size(n: int) -> str:
    """Pi's size label: 512B, 50.0KB, 1.2MB."""
    if n < 1024:
        return f"{n}B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f}KB"
    return f"{n / (1024 * 1024):.1f}MB"


def _nbytes(s: str) -> int:
    return len(s.encode("utf-8", "surrogatepass"))


def _untruncated(content: str, lines: int, nbytes: int, max_lines: int, max_bytes: int) -> TruncationResult:
    return TruncationResult(
        content=content,
        truncated=False,
        truncated_by=None,
        total_lines=lines,
        total_bytes=nbytes,
        output_lines=lines,
        output_bytes=nbytes,
        max_lines=max_lines,
        max_bytes=max_bytes,
    )


def truncate_head(
    content: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the first lines within both limits; never returns a partial line."""
    total_bytes = _nbytes(content)
    lines = content.split("\n")
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return _untruncated(content, len(lines), total_bytes, max_lines, max_bytes)
    if _nbytes(lines[0]) > max_bytes:
        return TruncationResult(
            content="",
            truncated=True,
            truncated_by="bytes",
            total_lines=len(lines),
            total_bytes=total_bytes,
            output_lines=0,
            output_bytes=0,
            first_line_exceeds_limit=True,
            max_lines=max_lines,
            max_bytes=max_bytes,
        )
    kept: list[str] = []
    used = 0
    by: Literal["lines", "bytes"] = "lines"
    for i, line in enumerate(lines[:max_lines]):
        size = _nbytes(line) + (1 if i > 0 else 0)
        if used + size > max_bytes:
            by = "bytes"
            break
        kept.append(line)
        used += size
    if len(kept) >= max_lines and used <= max_bytes:
        by = "lines"
    out = "\n".join(kept)
    return TruncationResult(
        content=out,
        truncated=True,
        truncated_by=by,
        total_lines=len(lines),
        total_bytes=total_bytes,
        output_lines=len(kept),
        output_bytes=_nbytes(out),
        max_lines=max_lines,
        max_bytes=max_bytes,
    )


def _tail_bytes(line: str, max_bytes: int) -> str:
    data = line.encode("utf-8", "surrogatepass")[-max_bytes:]
    start = 0
    while start < len(data) and (data[start] & 0xC0) == 0x80:  # skip a split UTF-8 sequence
        start += 1
    return data[start:].decode("utf-8", "replace")


def truncate_tail(
    content: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the last lines within both limits; a single over-long last line is cut to its final bytes."""
    total_bytes = _nbytes(content)
    lines = content.split("\n")
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return _untruncated(content, len(lines), total_bytes, max_lines, max_bytes)
    kept: list[str] = []
    used = 0
    by: Literal["lines", "bytes"] = "lines"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        size = _nbytes(line) + (1 if kept else 0)
        if used + size > max_bytes:
            by = "bytes"
            if not kept:
                cut = _tail_bytes(line, max_bytes)
                kept.append(cut)
                used = _nbytes(cut)
                partial = True
            break
        kept.append(line)
        used += size
    if len(kept) >= max_lines and used <= max_bytes:
        by = "lines"
    kept.reverse()
    out = "\n".join(kept)
    return TruncationResult(
        content=out,
        truncated=True,
        truncated_by=by,
        total_lines=len(lines),
        total_bytes=total_bytes,
        output_lines=len(kept),
        output_bytes=_nbytes(out),
        last_line_partial=partial,
        max_lines=max_lines,
        max_bytes=max_bytes,
    )


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cut a line to max_chars with Pi's '... [truncated]' marker; returns (text, was_truncated)."""
    if len(line) <= max_chars:
        return line, False
    return f"{line[:max_chars]}... [truncated]", True
