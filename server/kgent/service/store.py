"""The session store every front opens, so a session started over one front resumes over another (same ids)."""

from __future__ import annotations

from kgent.session.store import SessionStore


def open_store(*, on_loop: bool = False) -> tuple[SessionStore, bool]:
    """(the store, whether it is durable): JSONL under the state dir when available, else in memory. `on_loop`:
    written on the event loop's thread while the disk is fast (a process that serves one run)."""
    try:
        from kgent.session.jsonl import JsonlSessionStore
        from kgent.session.paths import sessions_root
    except ImportError:  # pragma: no cover - a build without the JSONL store
        from kgent.session.memory import InMemorySessionStore

        return InMemorySessionStore(), False
    return JsonlSessionStore(sessions_root(), on_loop=on_loop), True
