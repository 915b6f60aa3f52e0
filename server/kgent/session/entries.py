"""Session entries: the nodes of a session's append-only tree, and walks over them.

Entry types: `message` {message}, `config` {mode, provider, model}, `permission` {toolCallId, tool, decision, source,
argsSha256, operation, scope, reason, rules}, `compaction` {summary, coveredEntryIds, firstKeptEntryId, ...},
`label` {targetId, label}, `title` {title}, `review` {runId, files}, `review_decision` {decisions, note}, `subrun` {runId, parentRunId,
toolCallId, agent, tools} (a sub-agent's run starts afresh here, on a branch of its own), `instructions` {files} and
`skills` {skills, inPrompt?} (the context's resources, kgent.context.instructions / .skills). The line form and the file
around it are in docs/session-format.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kgent.core.errors import SessionError

_BASE_KEYS = ("id", "parentId", "type", "timestamp")


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionEntry:
    id: str
    parent_id: str | None
    type: str
    timestamp: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "parentId": self.parent_id,
            "type": self.type,
            "timestamp": self.timestamp,
            **self.data,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SessionEntry:
        data = {k: v for k, v in d.items() if k not in _BASE_KEYS}
        return cls(
            id=d["id"], parent_id=d.get("parentId"), type=d["type"], timestamp=d["timestamp"], data=data
        )


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id() -> str:
    """12 random hex digits (what `uuid.uuid4().hex[:12]` was: its first 6 bytes are random; uuid itself costs the
    start ~3 ms, platform with it, and is not needed)."""
    return os.urandom(6).hex()


def new_entry(type: str, parent_id: str | None, **data: Any) -> SessionEntry:
    """A fresh entry with a new id and the current time."""
    return SessionEntry(id=new_id(), parent_id=parent_id, type=type, timestamp=now_iso(), data=data)


def label_entry(parent_id: str | None, target_id: str, label: str | None) -> SessionEntry:
    """A `label` entry naming `target_id` (None clears its label)."""
    return new_entry("label", parent_id, targetId=target_id, label=label)


def title_of(entries: Iterable[SessionEntry]) -> str:
    """A session title: the one a person gave it (the last `title` entry's, unless cleared), else the first line of
    the first user message (at most 80 characters), else ''."""
    derived, named = derived_and_named(entries)
    return named or derived


def derived_and_named(entries: Iterable[SessionEntry]) -> tuple[str, str]:
    """(the first line of the first user message, the last `title` entry's title); '' for either one missing."""
    derived: str | None = None
    named = ""
    for e in entries:
        if e.type == TITLE:
            named = str(e.data.get("title") or "")
            continue
        msg = e.data.get("message") if derived is None and e.type == "message" else None
        if isinstance(msg, dict) and msg.get("role") == "user":
            derived = derived_title(
                str(e.data.get("typed") or msg.get("text", ""))
            )  # a slash command: as typed
    return derived or "", named


def derived_title(text: str) -> str:
    text = text.strip()
    return text.splitlines()[0][:80] if text else ""


TITLE = "title"  # a `title` entry {title}: the title a person gave the session ('' clears it)


def title_entry(parent_id: str | None, title: str) -> SessionEntry:
    """A `title` entry: `title` names the session from now on ('' goes back to the derived title)."""
    return new_entry(TITLE, parent_id, title=title)


def check_batch(known: set[str] | dict[str, Any], entries: Sequence[SessionEntry]) -> None:
    """Raise SessionError unless every entry has a new id and a parent that exists (or is earlier in the batch)."""
    fresh: set[str] = set()
    for e in entries:
        if not e.id or e.id in known or e.id in fresh:
            raise SessionError(f"entry id {e.id!r} is empty or already used")
        if e.parent_id is not None and e.parent_id not in known and e.parent_id not in fresh:
            raise SessionError(f"entry {e.id} has an unknown parent {e.parent_id!r}")
        fresh.add(e.id)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfo:
    id: str
    workspace: str
    created: str
    updated: str = ""
    title: str = ""
    entry_count: int = 0
    leaf_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessionId": self.id,
            "workspace": self.workspace,
            "created": self.created,
            "updated": self.updated or self.created,
            "title": self.title,
            "entryCount": self.entry_count,
            "leafId": self.leaf_id,
        }


@dataclass(slots=True)
class SessionTree:
    """A loaded session: its entries by id (in append order) and the active leaf.

    `warnings` lists what loading had to repair (a torn last line), for hosts to show.
    """

    info: SessionInfo
    entries: dict[str, SessionEntry] = field(default_factory=dict)
    leaf_id: str | None = None
    warnings: list[str] = field(default_factory=list)

    def add(self, entries: Iterable[SessionEntry]) -> None:
        for entry in entries:
            self.entries[entry.id] = entry
            self.leaf_id = entry.id

    def branch(self, leaf_id: str | None = None) -> list[SessionEntry]:
        """Entries from the root to `leaf_id` (default: the active leaf), in order."""
        path: list[SessionEntry] = []
        current = self.leaf_id if leaf_id is None else leaf_id
        while current is not None:
            entry = self.entries[current]
            path.append(entry)
            current = entry.parent_id
        path.reverse()
        return path

    def children(self, entry_id: str | None) -> list[SessionEntry]:
        return [e for e in self.entries.values() if e.parent_id == entry_id]

    def leaves(self) -> list[str]:
        """Ids of the entries without children (the tips of all branches), in append order."""
        parents = {e.parent_id for e in self.entries.values()}
        return [i for i in self.entries if i not in parents]

    def labels(self) -> dict[str, str]:
        """Entry id → label, from the `label` entries anywhere in the tree (the latest wins; None clears)."""
        out: dict[str, str] = {}
        for e in self.entries.values():
            if e.type == "label":
                target, text = str(e.data.get("targetId")), e.data.get("label")
                if text:
                    out[target] = text
                else:
                    out.pop(target, None)
        return out


def tree_to_dict(tree: SessionTree, *, branch_only: bool = False) -> dict[str, Any]:
    """The wire form of a tree (the daemon's `agent/session`): {sessionId, workspace, title, created, leafId,
    branch (ids root → leaf), entries (append order; only the branch's when `branch_only`), labels, warnings}."""
    branch = [e.id for e in tree.branch()] if tree.leaf_id is not None else []
    on_branch = set(branch)
    return {
        "sessionId": tree.info.id,
        "workspace": tree.info.workspace,
        "title": tree.info.title,
        "created": tree.info.created,
        "leafId": tree.leaf_id,
        "branch": branch,
        "entries": [e.to_dict() for e in tree.entries.values() if not branch_only or e.id in on_branch],
        "labels": tree.labels(),
        "warnings": list(tree.warnings),
    }


def check_session_id(session_id: str) -> str:
    """A session id is also a file name: letters, digits, '-', '_' and '.', not starting with '.', ≤ 64 chars."""
    if (
        not session_id
        or len(session_id) > 64
        or session_id[0] == "."
        or not all(c.isascii() and (c.isalnum() or c in "-_.") for c in session_id)
    ):
        raise SessionError(f"invalid session id {session_id!r}", code="invalid_session_id")
    return session_id
