"""Repairing a damaged session file: keep every valid entry, drop what cannot be read, and say what was dropped.

Pure over bytes (the store does the I/O and the locking). A line is dropped when it is not JSON, has the wrong shape
(kgent.session.shape), repeats an id, or is a leaf record naming no kept entry. An entry whose parent was dropped is
re-attached to that parent's nearest kept ancestor (or, when the dropped parent's own parent is unknown, to the entry
kept just before it), so the tree stays connected; every such move is reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgent.core.errors import SessionCorrupt
from kgent.session import codec
from kgent.session.shape import line_problem


@dataclass(frozen=True, slots=True)
class Dropped:
    line: int  # 1-based, as in the file
    offset: int  # bytes from the start of the file
    reason: str


@dataclass(frozen=True, slots=True)
class Reparented:
    entry_id: str
    old_parent: str
    new_parent: str | None


@dataclass(slots=True)
class RepairReport:
    """What a repair kept, dropped and re-attached; `backup` is where the original went (None: nothing changed)."""

    session_id: str
    path: str
    kept: int = 0
    dropped: list[Dropped] = field(default_factory=list)
    reparented: list[Reparented] = field(default_factory=list)
    backup: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.dropped or self.reparented)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "path": self.path,
            "kept": self.kept,
            "dropped": [{"line": d.line, "offset": d.offset, "reason": d.reason} for d in self.dropped],
            "reparented": [
                {"entryId": r.entry_id, "oldParent": r.old_parent, "newParent": r.new_parent} for r in self.reparented
            ],
            "backup": self.backup,
        }


def repair(data: bytes, session_id: str, path: Path) -> tuple[bytes, RepairReport]:
    """The repaired file's bytes and the report. A file whose header cannot be read is not repaired (SessionCorrupt)."""
    report = RepairReport(session_id=session_id, path=str(path))
    first = data.find(b"\n")
    try:
        head = json.loads(data[:first]) if first >= 0 else None
    except ValueError:
        head = None
    if not isinstance(head, dict) or head.get("format") != codec.FORMAT:
        raise SessionCorrupt(
            f"session {session_id} ({path}) has no readable header: it cannot be repaired", line=1, offset=0
        )
    codec.check_header(dict(head), f"session {session_id}")  # refuses a file from a newer kgent
    version = int(head["version"])
    out = [data[: first + 1]]
    kept: set[str] = set()
    gone: dict[str, str | None] = {}  # a dropped entry's id → its parent (as written)
    last: str | None = None
    pos = first + 1
    for n, raw in enumerate(data[first + 1 :].split(b"\n"), start=2):
        line_end = pos + len(raw) + 1
        if not raw.strip():
            if pos < len(data):
                report.dropped.append(Dropped(n, pos, "a blank line"))
            pos = line_end
            continue
        torn = line_end > len(data)
        try:
            obj: Any = json.loads(raw)
            if version < codec.VERSION:
                obj = codec._migrate(obj, version)
        except (ValueError, KeyError, TypeError) as exc:
            report.dropped.append(Dropped(n, pos, ("a torn last line" if torn else "not JSON") + f": {exc}"))
            pos = line_end
            continue
        problem = line_problem(obj)
        is_entry = isinstance(obj, dict) and isinstance(obj.get("id"), str)
        if problem:
            if is_entry:
                parent = obj.get("parentId")
                gone[obj["id"]] = parent if isinstance(parent, str) else None
            report.dropped.append(Dropped(n, pos, problem))
        elif is_entry and obj["id"] in kept:
            report.dropped.append(Dropped(n, pos, f"a second entry with id {obj['id']!r}"))
        elif is_entry:
            parent = obj.get("parentId")
            if parent is not None and parent not in kept:
                new_parent = _nearest_kept(parent, gone, kept)
                if new_parent is None and parent in gone and gone[parent] is None:
                    new_parent = None  # the dropped parent was a root: so is this entry now
                elif new_parent is None:
                    new_parent = last
                obj["parentId"] = new_parent
                report.reparented.append(Reparented(obj["id"], parent, new_parent))
                raw = codec.encode(obj)[:-1]
            kept.add(obj["id"])
            last = obj["id"]
            report.kept += 1
            out.append(raw + b"\n")
        else:  # a leaf record
            leaf = obj.get("leafId")
            if leaf is not None and leaf not in kept:
                moved = _nearest_kept(leaf, gone, kept)
                if moved is None:
                    report.dropped.append(Dropped(n, pos, f"a leaf record naming an unknown entry {leaf!r}"))
                    pos = line_end
                    continue
                obj["leafId"] = moved
                raw = codec.encode(obj)[:-1]
            out.append(raw + b"\n")
        pos = line_end
    return b"".join(out), report


def _nearest_kept(entry_id: str | None, gone: dict[str, str | None], kept: set[str]) -> str | None:
    seen: set[str] = set()
    while entry_id is not None and entry_id not in kept and entry_id in gone and entry_id not in seen:
        seen.add(entry_id)
        entry_id = gone[entry_id]
    return entry_id if entry_id in kept else None
