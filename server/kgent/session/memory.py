"""InMemorySessionStore: the SessionStore contract with no disk, for tests and hosts that want none."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from dataclasses import replace

from kgent.core.errors import SessionError, SessionNotFound
from kgent.session.entries import (
    SessionEntry,
    SessionInfo,
    SessionTree,
    check_batch,
    check_session_id,
    label_entry,
    new_id,
    now_iso,
    title_of,
)
from kgent.session.paths import normalize_workspace


class InMemorySessionStore:
    def __init__(self) -> None:
        self._trees: dict[str, SessionTree] = {}
        self._blobs: dict[str, dict[str, bytes]] = {}

    async def create(self, *, workspace: str, session_id: str | None = None) -> SessionInfo:
        sid = check_session_id(session_id or new_id())
        if sid in self._trees:
            raise SessionError(f"session {sid} already exists", code="session_exists")
        created = now_iso()
        info = SessionInfo(id=sid, workspace=normalize_workspace(workspace), created=created, updated=created)
        self._trees[sid] = SessionTree(info=info)
        return info

    def _tree(self, session_id: str) -> SessionTree:
        try:
            return self._trees[check_session_id(session_id)]
        except KeyError:
            raise SessionNotFound(f"no session {session_id!r}") from None

    async def load(self, session_id: str) -> SessionTree:
        return copy.deepcopy(self._tree(session_id))

    async def append(self, session_id: str, entries: Sequence[SessionEntry]) -> None:
        tree = self._tree(session_id)
        if not entries:
            return
        check_batch(tree.entries, entries)
        tree.add(copy.deepcopy(list(entries)))
        tree.info = replace(
            tree.info,
            updated=entries[-1].timestamp,
            entry_count=len(tree.entries),
            leaf_id=tree.leaf_id,
            title=title_of(tree.entries.values()),
        )

    async def set_leaf(self, session_id: str, entry_id: str | None) -> None:
        tree = self._tree(session_id)
        if entry_id is not None and entry_id not in tree.entries:
            raise SessionError(f"no entry {entry_id!r} in session {session_id}", code="entry_not_found")
        tree.leaf_id = entry_id
        tree.info = replace(tree.info, leaf_id=entry_id, updated=now_iso())

    async def label(self, session_id: str, entry_id: str, label: str | None) -> SessionEntry:
        """Append a `label` entry naming `entry_id` (None clears it); returns the entry."""
        tree = self._tree(session_id)
        if entry_id not in tree.entries:
            raise SessionError(f"no entry {entry_id!r} in session {session_id}", code="entry_not_found")
        entry = label_entry(tree.leaf_id, entry_id, label)
        await self.append(session_id, [entry])
        return entry

    async def list(self, workspace: str) -> list[SessionInfo]:
        ws = normalize_workspace(workspace)
        infos = [t.info for t in self._trees.values() if t.info.workspace == ws]
        return sorted(infos, key=lambda i: (i.updated or i.created, i.created), reverse=True)

    async def delete(self, session_id: str) -> None:
        self._tree(session_id)
        del self._trees[session_id]
        self._blobs.pop(session_id, None)

    async def put_blob(self, session_id: str, data: bytes) -> str:
        self._tree(session_id)
        sha = hashlib.sha256(data).hexdigest()
        self._blobs.setdefault(session_id, {}).setdefault(sha, bytes(data))
        return sha

    async def get_blob(self, session_id: str, sha256: str) -> bytes:
        self._tree(session_id)
        data = self._blobs.get(session_id, {}).get(sha256)
        if data is None:
            raise SessionError(
                f"session {session_id} refers to an image ({sha256[:12]}…) that is not stored",
                code="blob_missing",
            )
        return data

    async def aclose(self) -> None:
        return None
