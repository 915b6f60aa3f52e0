"""The permissions package's public names are pinned and sorted."""

from __future__ import annotations

import kgent.permissions as permissions


def test_public_api_is_pinned_and_sorted() -> None:
    assert permissions.__all__ == sorted(permissions.__all__)
    assert permissions.__all__ == [
        "Action",
        "Decision",
        "Intent",
        "MODES",
        "MODE_ALIASES",
        "Match",
        "Mode",
        "Operation",
        "Proposal",
        "Risk",
        "Rule",
        "RuleBook",
        "RuleError",
        "RuleFile",
        "RuleFiles",
        "RuleScope",
        "Scope",
        "Scoped",
        "SessionRules",
        "Verdict",
        "answer_scope",
        "binding_hash",
        "canonical_json",
        "card",
        "classify",
        "decide",
        "describe",
        "match",
        "normalize_mode",
        "parse_rule",
        "propose",
        "request_id",
        "risk_of",
        "shell_grant",
    ]
    for name in permissions.__all__:
        assert getattr(permissions, name) is not None
