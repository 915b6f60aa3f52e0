"""The rules methods (`agent/rules`, `agent/addRule`, `agent/removeRule`): the effective rules of a workspace — the
user's file, the project's `.kgent/config.toml`, the session rules of its sessions — listed, added and removed.

Session rules of a session that has no live run are read from its latest permission entry (the 20 sessions updated
last), and a change to them is a new `rules` entry at its leaf; a live session's are changed in the daemon and
stored with its next permission decision.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kgent.core.errors import SessionNotFound
from kgent.permissions import RuleBook, RuleError, RuleScope, SessionRules, describe, parse_rule
from kgent.permissions.rulesyntax import Rule
from kgent.service import wire as W
from kgent.service.errors import INVALID_PARAMS, NOT_FOUND, ServiceError
from kgent.session.entries import new_entry
from kgent.session.paths import normalize_workspace
from kgent.session.store import SessionStore

T = TypeVar("T")

RECENT = 20  # idle sessions whose stored rules agent/rules reads


def _info(
    rule: Rule, scope: RuleScope, *, session_id: str | None = None, file: Path | None = None
) -> dict[str, Any]:
    return {
        "rule": rule.text,
        "decision": rule.decision,
        "scope": scope,
        "sessionId": session_id,
        "text": describe(rule, scope),
        "file": str(file) if file is not None else None,
    }


async def _stored(store: SessionStore, session_id: str) -> list[Any] | None:
    """The rules a session stored in its latest permission entry (on its active branch)."""
    tree = await store.load(session_id)
    for entry in reversed(tree.branch()):
        if entry.type in ("permission", "rules") and "rules" in entry.data:
            rules: list[Any] = entry.data["rules"]
            return rules
    return None


async def list_rules(book: RuleBook, store: SessionStore, workspace: Path) -> W.RulesResult:
    files = book.files
    user_path, project_path = files.path("user", workspace), files.path("project", workspace)
    personal_path = files.personal_path(workspace)
    user, project = files.file("user", workspace).load(), files.file("project", workspace).load()
    personal = files.personal(workspace).load()
    items: list[dict[str, Any]] = []
    items += [_info(r, "user", file=user_path) for r in user.deny]
    items += [_info(r, "project", file=project_path) for r in project.deny]
    items += [_info(r, "project", file=personal_path) for r in personal.deny]
    items += [_info(r, "user", file=user_path) for r in user.allow]
    items += [_info(r, "project", file=personal_path) for r in personal.allow]
    items += [_info(r, "project", file=project_path) for r in project.allow]
    sessions: dict[str, SessionRules] = dict(book.for_workspace(workspace))
    for info in (await store.list(str(workspace)))[:RECENT]:
        if info.id not in sessions:
            try:
                stored = await _stored(store, info.id)
                if stored:
                    sessions[info.id] = SessionRules.from_list(stored)
            except Exception:  # a session that cannot be read has no rules to show (agent/session says why)
                continue
    for sid, rules in sessions.items():
        items += [_info(r, "session", session_id=sid) for r in rules.rules if not r.allow]
        items += [_info(r, "session", session_id=sid) for r in rules.rules if r.allow]
    problems = files.problems(workspace)
    return W.RulesResult.model_validate(
        {
            "rules": items,
            "files": {"project": str(project_path), "user": str(user_path), "personal": str(personal_path)},
            "projectTrusted": files.is_trusted(workspace),
            "problems": problems or None,
        }
    )


def _parse(p: W.RuleParams) -> Rule:
    try:
        return parse_rule(p.rule, p.decision)
    except RuleError as exc:
        raise ServiceError(INVALID_PARAMS, str(exc), "invalid_params") from None


async def _change(
    book: RuleBook,
    store: SessionStore,
    p: W.RuleParams,
    workspace: Path,
    live: Callable[[str], bool],
    change: Callable[[SessionRules], T],
) -> T:
    """Change a session's rules: a live session's held rules (stored with its next permission decision), else a
    `rules` entry at the session's leaf holding its new rules (as a rename adds a `title` entry)."""
    sid = p.session_id
    if sid is None:
        raise ServiceError(INVALID_PARAMS, "a session rule needs a sessionId", "invalid_params")
    if book.held(sid) and live(sid):
        book.pinned.add(sid)
        return change(book.session(sid, workspace))
    try:
        tree = await store.load(sid)
    except SessionNotFound:
        raise ServiceError(NOT_FOUND, f"no session {sid}", "session_not_found") from None
    if normalize_workspace(tree.info.workspace) != str(workspace):
        raise ServiceError(
            INVALID_PARAMS, f"session {sid} belongs to {tree.info.workspace}", "invalid_params"
        )
    rules = book.sessions.get(sid)
    if rules is None:
        stored: list[Any] = next(
            (
                e.data["rules"]
                for e in reversed(tree.branch())
                if e.type in ("permission", "rules") and "rules" in e.data
            ),
            [],
        )
        rules = SessionRules.from_list(stored)
    result = change(rules)
    entry = new_entry("rules", tree.leaf_id, rules=rules.to_list())
    await store.append(sid, [entry])
    book.sessions.pop(sid, None)  # the entry holds them now; the next run restores them
    book.pinned.discard(sid)
    return result


async def add_rule(
    book: RuleBook, store: SessionStore, p: W.RuleParams, workspace: Path, live: Callable[[str], bool]
) -> W.AddRuleResult:
    rule = _parse(p)
    if p.scope == "session":
        stored = await _change(book, store, p, workspace, live, lambda rules: rules.add(rule))
        return W.AddRuleResult.model_validate({"rule": _info(stored, "session", session_id=p.session_id)})
    file = book.files.writable(p.scope, workspace)
    try:
        file.add(rule)
    except (RuleError, OSError) as exc:
        raise ServiceError(INVALID_PARAMS, str(exc), "invalid_params") from None
    return W.AddRuleResult.model_validate({"rule": _info(rule, p.scope, file=file.path)})


async def remove_rule(
    book: RuleBook, store: SessionStore, p: W.RuleParams, workspace: Path, live: Callable[[str], bool]
) -> W.RemoveRuleResult:
    rule = _parse(p)
    if p.scope == "session":
        removed = await _change(book, store, p, workspace, live, lambda rules: rules.remove(rule))
        return W.RemoveRuleResult(removed=removed)
    files = (
        book.files.project_files(workspace) if p.scope == "project" else (book.files.file("user", workspace),)
    )
    try:
        removed = any([f.remove(rule) for f in files if f.path.exists()])  # a list: remove from every file
    except (RuleError, OSError) as exc:
        raise ServiceError(INVALID_PARAMS, str(exc), "invalid_params") from None
    return W.RemoveRuleResult(removed=removed)
