# Permissions: modes, operation classification, the decision matrix, remembered session rules, approval binding.
# Everything here is a value or a pure function; the host that answers `ask` lives with the kernel.

from kgent.permissions.binding import binding_hash, canonical_json, request_id
from kgent.permissions.intent import Intent, Operation, Scope, classify
from kgent.permissions.modes import MODE_ALIASES, MODES, Mode, normalize_mode
from kgent.permissions.policy import Action, Risk, Verdict, decide, risk_of, shell_grant
from kgent.permissions.rules import Rule, SessionRules, rule_pattern

__all__ = [
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
