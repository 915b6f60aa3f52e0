"""Sessions: an append-only tree of entries per conversation, stored as JSONL (durable) or in memory."""

from kgent.session.entries import SessionEntry, SessionInfo, SessionTree, tree_to_dict
from kgent.session.jsonl import JsonlSessionStore
from kgent.session.memory import InMemorySessionStore
from kgent.session.paths import sessions_root, workspace_key
from kgent.session.store import SessionStore

__all__ = [
    "InMemorySessionStore",
    "JsonlSessionStore",
    "SessionEntry",
    "SessionInfo",
    "SessionStore",
    "SessionTree",
    "sessions_root",
    "tree_to_dict",
    "workspace_key",
]
