# Every rule a kernel consults: the rule files (project, user) and the session rules it holds, by session.

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kgent.permissions.rulefiles import RuleFiles
from kgent.permissions.rules import Scoped, SessionRules


class RuleBook:
    """The rule files and the session rules held for live sessions (and for sessions a rules view changed, until
    their next run stores them in its permission entries)."""

    def __init__(self, files: RuleFiles | None = None) -> None:
        self.files = files if files is not None else RuleFiles()
        self.sessions: dict[str, SessionRules] = {}
        self.workspaces: dict[str, Path] = {}
        self.pinned: set[str] = set()  # changed from a rules view: kept when the run ends

    def session(self, session_id: str, workspace: Path | None = None) -> SessionRules:
        rules = self.sessions.get(session_id)
        if rules is None:
            rules = self.sessions[session_id] = SessionRules()
        if workspace is not None:
            self.workspaces.setdefault(session_id, workspace.resolve())
        return rules

    def held(self, session_id: str) -> bool:
        return session_id in self.sessions

    def restore(self, session_id: str, items: Sequence[Mapping[str, Any]] | None) -> None:
        """Hold the rules a session stored (its latest permission entry), unless they are held already."""
        if session_id not in self.sessions and items is not None:
            self.sessions[session_id] = SessionRules.from_list(items)

    def release(self, session_id: str) -> None:
        """A session's last run ended: forget its rules (they are in its permission entries) unless pinned."""
        if session_id not in self.pinned:
            self.sessions.pop(session_id, None)
            self.workspaces.pop(session_id, None)

    def in_force(self, session_id: str, workspace: Path) -> list[Scoped]:
        """Every rule that speaks for a call of this session: its own, the project's and the user's."""
        own = [Scoped(r, "session", session_id) for r in self.session(session_id).rules]
        return own + self.files.scoped(workspace)

    def for_workspace(self, workspace: Path) -> list[tuple[str, SessionRules]]:
        where = workspace.resolve()
        return [(sid, rules) for sid, rules in self.sessions.items() if self.workspaces.get(sid) == where]
