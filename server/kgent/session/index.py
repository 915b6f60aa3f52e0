"""The listing cache of one workspace directory (`.index.json`): a summary per session file, keyed by the file's
identity and size, so `list` reads only the bytes appended since it last looked.

It is only a cache: a lost, stale or damaged index costs a re-read of the session files, never data.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from kgent.core.errors import SessionError
from kgent.session import codec
from kgent.session.entries import TITLE, SessionInfo, derived_title

INDEX_NAME = ".index.json"
_INDEX_VERSION = 2  # 2: rows keep a person's title (`named`) beside the derived one
log = logging.getLogger("kgent.session")

Row = dict[str, Any]


def list_sessions(directory: Path, workspace: str) -> list[SessionInfo]:
    """Summaries of the sessions of `workspace` in `directory`, most recently updated first."""
    cache = _read_index(directory)
    fresh: dict[str, Row] = {}
    infos: list[SessionInfo] = []
    for path in directory.glob("*.jsonl"):
        sid = path.name[: -len(".jsonl")]
        try:
            st = path.stat()
            row = _refresh(path, st, cache.get(sid))
        except FileNotFoundError:
            continue
        except SessionError as exc:
            log.warning("not listing %s: %s", path.name, exc.message)
            continue
        fresh[sid] = row
        if row["workspace"] == workspace:
            infos.append(
                SessionInfo(
                    id=sid,
                    workspace=row["workspace"],
                    created=row["created"],
                    updated=row["updated"],
                    title=row.get("named") or row["title"],
                    entry_count=row["count"],
                    leaf_id=row["leaf"],
                )
            )
    if fresh != cache:
        _write_index(directory, fresh)
    return sorted(infos, key=lambda i: (i.updated or i.created, i.created), reverse=True)


def _refresh(path: Path, st: os.stat_result, old: Row | None) -> Row:
    if old is not None and old.get("ino") == st.st_ino:
        if old["size"] == st.st_size:
            return old
        if st.st_size >= old["end"]:  # append-only: the bytes before `end` cannot have changed
            with path.open("rb") as f:
                f.seek(old["end"])
                tail = f.read()
            row = dict(old)
            if _scan_tail(row, tail):
                row["size"] = old["end"] + len(tail)
                return row
    data = path.read_bytes()
    parsed = codec.parse(data, f"session {path.name[: -len('.jsonl')]}")
    return {
        "ino": st.st_ino,
        "size": len(data),
        "end": parsed.end,
        "workspace": parsed.header.get("workspace", ""),
        "created": parsed.header.get("created", ""),
        "updated": parsed.updated,
        "title": parsed.derived_title,
        "named": parsed.named_title,
        "count": len(parsed.entries),
        "leaf": parsed.leaf_id,
    }


def _scan_tail(row: Row, tail: bytes) -> bool:
    """Fold appended lines into `row`; False when the tail needs the full (validating) parse instead."""
    pos = 0
    while True:
        nl = tail.find(b"\n", pos)
        if nl < 0:
            return True  # nothing more, or a torn last line: not counted, `end` stays before it
        try:
            obj = json.loads(tail[pos:nl])
        except ValueError:
            return False
        if not isinstance(obj, dict):
            return False
        if "id" in obj:
            row["count"] += 1
            row["leaf"] = obj["id"]
            row["updated"] = obj.get("timestamp", row["updated"])
            msg = obj.get("message")
            if obj.get("type") == TITLE:
                row["named"] = str(obj.get("title") or "")
            elif (
                not row["title"]
                and obj.get("type") == "message"
                and isinstance(msg, dict)
                and msg.get("role") == "user"
            ):
                row["title"] = derived_title(str(obj.get("typed") or msg.get("text", "")))
        elif obj.get("type") == "leaf":
            row["leaf"] = obj.get("leafId")
            row["updated"] = obj.get("timestamp", row["updated"])
        row["end"] += nl + 1 - pos
        pos = nl + 1


def forget(directory: Path, session_id: str) -> None:
    """Drop a deleted session's row from the index (a leftover row would only be dropped by the next list)."""
    rows = _read_index(directory)
    if rows.pop(session_id, None) is not None:
        _write_index(directory, rows)


def _read_index(directory: Path) -> dict[str, Row]:
    try:
        data = json.loads((directory / INDEX_NAME).read_bytes())
    except (OSError, ValueError):
        return {}
    if (
        not isinstance(data, dict)
        or data.get("version") != _INDEX_VERSION
        or not isinstance(data.get("sessions"), dict)
    ):
        return {}
    sessions: dict[str, Row] = data["sessions"]
    return sessions


def _write_index(directory: Path, rows: dict[str, Row]) -> None:
    """Replace the index atomically (temp file + rename); a failure only means the next list re-reads."""
    tmp = directory / f"{INDEX_NAME}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps({"version": _INDEX_VERSION, "sessions": rows}), encoding="utf-8")
        os.replace(tmp, directory / INDEX_NAME)
    except OSError as exc:
        log.debug("could not write the session index in %s: %s", directory, exc)
        tmp.unlink(missing_ok=True)
