"""The permissions package's public names are pinned and sorted."""

from __future__ import annotations

import kgent.permissions as permissions


def test_public_api_is_pinned_and_sorted() -> None:
    assert permissions.__all__ == sorted(permissions.__all__)
    assert permissions.__all__ == [
        "Action",
        "Intent",
        "MODES",
        "MODE_ALIASES",
        "Mode",
        "Operation",
        "Risk",
        "Rule",
        "Scope",
        "SessionRules",
        "Verdict",
        "binding_hash",
        "canonical_json",
        "classify",
        "decide",
        "normalize_mode",
        "request_id",
        "risk_of",
        "rule_pattern",
        "shell_grant",
    ]
    for name in permissions.__all__:
        assert getattr(permissions, name) is not None
