"""The session file's line format: one header line, then entries and `leaf` records, one JSON object a line.

Pure functions over bytes; the store (jsonl.py) does the I/O. A line counts only once its newline is written, so a
crash can leave at most one torn line, at the end: it is dropped with a warning, never fatal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kgent.core.errors import SessionCorrupt, SessionError
from kgent.session.entries import SessionEntry, derived_and_named, title_of
from kgent.session.shape import line_problem

FORMAT = "kgent-session"
VERSION = 1

# One migration per step: MIGRATIONS[n] turns a version-n line (header or record) into version n+1.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_dumps_ascii = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


def encode(obj: dict[str, Any]) -> bytes:
    """One line: compact JSON (keys in insertion order), UTF-8, newline-terminated. Text that is not valid
    Unicode (a lone surrogate from a model or a tool) is written \\u-escaped, so it round-trips exactly."""
    text = _dumps(obj)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (_dumps_ascii(obj) + "\n").encode("ascii")


def header(session_id: str, workspace: str, created: str) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "id": session_id,
        "workspace": workspace,
        "created": created,
    }


def leaf_record(leaf_id: str | None, timestamp: str) -> dict[str, Any]:
    """The active leaf moved without an append (a fork, or a reset to the start)."""
    return {"type": "leaf", "leafId": leaf_id, "timestamp": timestamp}


@dataclass(slots=True)
class Parsed:
    """What a file (or the part of it after `start`) holds. `end` is the offset just past the last good line."""

    header: dict[str, Any]
    entries: dict[str, SessionEntry] = field(default_factory=dict)
    leaf_id: str | None = None
    updated: str = ""
    end: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return title_of(self.entries.values())

    @property
    def derived_title(self) -> str:
        return derived_and_named(self.entries.values())[0]

    @property
    def named_title(self) -> str:
        return derived_and_named(self.entries.values())[1]


def check_header(obj: Any, name: str) -> dict[str, Any]:
    """The header, migrated to VERSION; SessionError for a foreign file or one written by a newer kgent."""
    if not isinstance(obj, dict) or obj.get("format") != FORMAT or not isinstance(obj.get("version"), int):
        raise SessionCorrupt(f"{name} is not a kgent session file (bad header)", line=1, offset=0)
    version = obj["version"]
    if version > VERSION:
        raise SessionError(
            f"{name} has session format version {version}, but this kgent reads up to version {VERSION}: "
            "upgrade kgent to open it",
            code="session_version_unsupported",
        )
    return _migrate(obj, version)


def _migrate(obj: dict[str, Any], version: int) -> dict[str, Any]:
    while version < VERSION:
        obj = MIGRATIONS[version](obj)
        version += 1
    return obj


def parse(data: bytes, name: str = "session file") -> Parsed:
    """Parse a whole file. Raises SessionError for a bad header, a newer version or damage before the last line."""
    first = data.find(b"\n")
    if first < 0:
        raise SessionCorrupt(f"{name} has no complete header line", line=1, offset=0)
    try:
        head = json.loads(data[:first])
    except ValueError:
        raise SessionCorrupt(f"{name} has an unreadable header line", line=1, offset=0) from None
    head = check_header(head, name)
    parsed = Parsed(header=head, end=first + 1, updated=str(head.get("created", "")))
    parse_into(parsed, data, first + 1, name, int(head["version"]))
    return parsed


_decode = json.JSONDecoder().decode


def parse_into(
    parsed: Parsed, data: bytes, start: int, name: str, version: int = VERSION, first_line: int = 2
) -> None:
    """Add the records of `data[start:]` to `parsed` (used for whole files and for appended tails).

    A last line that is not JSON (a torn write) is dropped with a warning; anything else wrong — a line of the wrong
    shape anywhere, damage before the last line — raises SessionCorrupt naming the line and its byte offset."""
    last_nl = data.rfind(b"\n", start)
    complete = data[start : last_nl + 1] if last_nl >= 0 else b""
    if len(data) > start + len(complete):  # no newline at the end: the last write never completed
        parsed.warnings.append(
            f"{name}: dropped a torn last line ({len(data) - start - len(complete)} bytes)"
        )
    try:
        text = complete.decode("utf-8")
    except UnicodeDecodeError:
        text = complete.decode("utf-8", "surrogateescape")  # the bad line is found (and judged) below
    lines = text.split("\n")
    lines.pop()  # the empty string after the final newline
    if lines and version == VERSION and _parse_fast(parsed, lines):
        parsed.end = start + len(complete)
        return
    entries = parsed.entries
    pos = start
    for i, line in enumerate(lines):
        size = len(line.encode("utf-8", "surrogateescape")) + 1 if not line.isascii() else len(line) + 1
        where = f"{name} is damaged at line {first_line + i} (byte {pos})"
        if line.strip():
            try:
                obj = _decode(line)
                if version < VERSION:
                    obj = _migrate(obj, version)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                if any(rest.strip() for rest in lines[i + 1 :]):
                    raise SessionCorrupt(f"{where}: {exc}", line=first_line + i, offset=pos) from None
                parsed.warnings.append(f"{name}: dropped an unreadable last line ({size} bytes)")
                return
            try:
                _apply(parsed, entries, obj)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise SessionCorrupt(f"{where}: {exc}", line=first_line + i, offset=pos) from None
        pos += size
        parsed.end = pos


def _parse_fast(parsed: Parsed, lines: list[str]) -> bool:
    """All lines in one decode call (the common case: an undamaged file); False, with `parsed` untouched, when
    anything is off, so the line-by-line pass can say where."""
    try:
        objs = _decode("[" + ",".join(lines) + "]")
        trial = Parsed(
            header=parsed.header, entries=dict(parsed.entries), leaf_id=parsed.leaf_id, updated=parsed.updated
        )
        for obj in objs:
            _apply(trial, trial.entries, obj)
    except (ValueError, KeyError, TypeError, AttributeError):
        return False
    parsed.entries, parsed.leaf_id, parsed.updated = trial.entries, trial.leaf_id, trial.updated
    return True


def _apply(parsed: Parsed, entries: dict[str, SessionEntry], obj: dict[str, Any]) -> None:
    problem = line_problem(obj)
    if problem:
        raise ValueError(problem)
    if "id" in obj:
        entry_id, parent = obj.pop("id"), obj.pop("parentId", None)
        entry = SessionEntry(
            id=entry_id, parent_id=parent, type=obj.pop("type"), timestamp=obj.pop("timestamp"), data=obj
        )
        if entry_id in entries:
            raise ValueError(f"duplicate entry id {entry_id!r}")
        if parent is not None and parent not in entries:
            raise ValueError(f"entry {entry_id!r} has an unknown parent {parent!r}")
        entries[entry_id] = entry
        parsed.leaf_id = entry_id
        parsed.updated = entry.timestamp
    elif obj["type"] == "leaf":
        leaf = obj["leafId"]
        if leaf is not None and leaf not in entries:
            raise ValueError(f"leaf record names an unknown entry {leaf!r}")
        parsed.leaf_id = leaf
        parsed.updated = obj.get("timestamp", parsed.updated)
    else:
        raise ValueError(f"unknown record type {obj['type']!r}")
