# Session rules: the host's `allow_always` / `reject_always` answers, remembered per tool and pattern.
# A pattern is a path, the first one or two words of a simple command, or a tool name — never a full command.

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from kgent.core.errors import SessionError
from kgent.permissions import commands
from kgent.permissions.intent import Intent

_DECISIONS: Final = {"allow_always": True, "reject_always": False}


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One remembered answer; an allow never covers a call that reaches wider (outside, protected) than it did."""

    tool: str
    pattern: str
    allow: bool
    outside: bool = False
    protected: bool = False

    def matches(self, intent: Intent) -> bool:
        """True when this rule speaks for `intent` (reject rules match any segment of a compound command)."""
        if intent.tool != self.tool:
            return False
        if self.allow and (
            (intent.scope == "outside" and not self.outside) or (intent.protected and not self.protected)
        ):
            return False
        if intent.subject != "command":
            return rule_pattern(intent) == self.pattern
        if intent.command is None:
            return False
        prefix = tuple(self.pattern.split())
        if self.allow:
            words = commands.simple_words(intent.command)
            return words is not None and words[: len(prefix)] == prefix
        return any(
            commands.strip_assignments(segment)[: len(prefix)] == prefix
            for segment in commands.split_segments(intent.command)
        )


def rule_pattern(intent: Intent) -> str | None:
    """The pattern a remembered answer for this call would use; None when the call cannot be remembered."""
    if intent.subject == "path":
        return intent.paths[0] if intent.operation != "unknown" and intent.paths else None
    if intent.subject == "command":
        words = commands.rule_words(intent.command) if intent.command is not None else None
        return " ".join(words) if words else None
    return intent.tool


class SessionRules:
    """The remembered answers of one session; consulted when the policy says `ask`. Reject rules win."""

    __slots__ = ("_rules",)

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self._rules: list[Rule] = list(rules)

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules in the order they were remembered."""
        return tuple(self._rules)

    def remember(self, intent: Intent, allow: bool) -> Rule | None:
        """Store an `allow_always` (True) or `reject_always` (False) answer; None if the call has no pattern."""
        pattern = rule_pattern(intent)
        if pattern is None:
            return None
        outside, protected = intent.scope == "outside", intent.protected
        for old in [r for r in self._rules if (r.tool, r.pattern, r.allow) == (intent.tool, pattern, allow)]:
            outside, protected = outside or old.outside, protected or old.protected
            self._rules.remove(old)
        rule = Rule(tool=intent.tool, pattern=pattern, allow=allow, outside=outside, protected=protected)
        self._rules.append(rule)
        return rule

    def match(self, intent: Intent) -> bool | None:
        """False if a reject rule matches, else True if an allow rule matches, else None (ask the host)."""
        if any(not r.allow and r.matches(intent) for r in self._rules):
            return False
        if any(r.allow and r.matches(intent) for r in self._rules):
            return True
        return None

    def to_list(self) -> list[dict[str, Any]]:
        """A JSON-ready list for the session file (patterns only, no arguments beyond two command words)."""
        return [
            {
                "tool": r.tool,
                "pattern": r.pattern,
                "decision": "allow_always" if r.allow else "reject_always",
                "outside": r.outside,
                "protected": r.protected,
            }
            for r in self._rules
        ]

    @classmethod
    def from_list(cls, items: Iterable[Mapping[str, Any]]) -> SessionRules:
        """Rebuild from `to_list()` output; a malformed item raises SessionError."""
        rules: list[Rule] = []
        for index, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise SessionError(f"permission rule #{index} is not an object")
            tool, pattern, decision = item.get("tool"), item.get("pattern"), item.get("decision")
            outside, protected = item.get("outside", False), item.get("protected", False)
            if not isinstance(tool, str) or not tool or not isinstance(pattern, str) or not pattern:
                raise SessionError(f"permission rule #{index} needs a non-empty tool and pattern")
            if not isinstance(decision, str) or decision not in _DECISIONS:
                raise SessionError(f"permission rule #{index} has an unknown decision: {decision!r}")
            if not isinstance(outside, bool) or not isinstance(protected, bool):
                raise SessionError(f"permission rule #{index} has non-boolean outside/protected flags")
            rules.append(
                Rule(
                    tool=tool,
                    pattern=pattern,
                    allow=_DECISIONS[decision],
                    outside=outside,
                    protected=protected,
                )
            )
        return cls(rules)
