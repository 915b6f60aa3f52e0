"""The SessionStore seam: durable (JsonlSessionStore) or in-memory (InMemorySessionStore), one contract."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from kgent.session.entries import SessionEntry, SessionInfo, SessionTree


@runtime_checkable
class SessionStore(Protocol):
    """Contract (tests/session/test_contract.py runs it against both stores):

    - `create` refuses an existing id (SessionError `session_exists`); ids are file-name safe.
    - `append` is one durable batch (on disk before it returns); every entry needs a new id and a parent that
      exists (or precedes it in the batch), else SessionError and nothing is stored. It moves the leaf to the
      batch's last entry.
    - `set_leaf` moves the active leaf durably without adding an entry (a fork: the next append branches there).
    - `label` appends a `label` entry at the leaf; `load` returns an independent copy; unknown ids raise
      SessionNotFound.
    - `delete` removes a session (SessionNotFound if there is none): it is gone from `list` and `load`.
    - `list` gives the sessions of one workspace (absolute, symlinks resolved), most recently updated first.
    - `put_blob` stores bytes an entry refers to by their sha256 (once: the same bytes again are the same blob) and
      returns the hash; `get_blob` reads them back (SessionError `blob_missing` if gone). `delete` drops them.
    - `aclose` releases what the store holds; it may be called more than once.
    """

    async def create(self, *, workspace: str, session_id: str | None = None) -> SessionInfo: ...

    async def load(self, session_id: str) -> SessionTree: ...

    async def append(self, session_id: str, entries: Sequence[SessionEntry]) -> None: ...

    async def set_leaf(self, session_id: str, entry_id: str | None) -> None: ...

    async def label(self, session_id: str, entry_id: str, label: str | None) -> SessionEntry: ...

    async def list(self, workspace: str) -> list[SessionInfo]: ...

    async def delete(self, session_id: str) -> None: ...

    async def put_blob(self, session_id: str, data: bytes) -> str: ...

    async def get_blob(self, session_id: str, sha256: str) -> bytes: ...

    async def aclose(self) -> None:
        """Release what the store holds (open files, locks); the store is not used afterwards."""
        ...
