# Permissions: modes, operation classification, the decision matrix, rules (session, project, user), approval binding.
# Everything here is a value or a pure function; the host that answers `ask` lives with the kernel.

from kgent.core.modes import MODE_ALIASES, MODES, Mode, normalize_mode
from kgent.permissions.binding import binding_hash, canonical_json, request_id
from kgent.permissions.intent import Intent, Operation, Scope, classify
from kgent.permissions.policy import Action, Risk, Verdict, decide, risk_of, shell_grant
from kgent.permissions.rulebook import RuleBook
from kgent.permissions.rulefiles import RuleFile, RuleFiles
from kgent.permissions.rules import (
    Match,
    Proposal,
    Scoped,
    SessionRules,
    answer_scope,
    card,
    describe,
    match,
    propose,
)
from kgent.permissions.rulesyntax import Decision, Rule, RuleError, RuleScope, parse_rule

__all__ = [
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
