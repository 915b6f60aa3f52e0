# Rules: the remembered 'always' answers (session) and the rule files (project, user), and what an 'always' answer
# on one call would create (shown on the card before it is granted). The syntax is in rulesyntax.py; the files in
# rulefiles.py. Deny wins over allow at every scope.

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from kgent.core.errors import SessionError
from kgent.core.events import DecisionSource, PermissionOption, RuleText
from kgent.core.redact import redact
from kgent.permissions.codeexec import caveat, executing
from kgent.permissions.intent import Intent
from kgent.permissions.rulesyntax import (
    Rule,
    RuleError,
    RuleScope,
    command_rule,
    command_segments,
    loose_segments,
    parse_rule,
    segment_problem,
    shellwords_quote,
)

_DECISIONS: Final = {"allow_always": True, "reject_always": False}
_SOURCES: Final[dict[RuleScope, DecisionSource]] = {
    "session": "session_rule",
    "project": "project_rule",
    "user": "user_rule",
}


@dataclass(frozen=True, slots=True)
class Scoped:
    """A rule and where it lives."""

    rule: Rule
    scope: RuleScope
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class Match:
    """What the rules say about a call: allowed or denied, and by which rule(s)."""

    allow: bool
    by: tuple[Scoped, ...]

    @property
    def source(self) -> DecisionSource:
        """Where the deciding rule lives, as permission_resolved's `source` says it (the first rule's scope)."""
        return _SOURCES[self.by[0].scope]

    @property
    def reason(self) -> str:
        first = self.by[0]
        names = ", ".join(f"`{s.rule.text}`" for s in self.by)
        verb = "allowed" if self.allow else "denied"
        kind = "rules" if len(self.by) > 1 else "rule"
        return f"{verb} by the {first.scope} {kind} {names}"


def match(intent: Intent, rules: Iterable[Scoped]) -> Match | None:
    """Deny if any deny rule speaks for the call (any part of a compound command); else allow when the allow rules
    together cover it (each simple command of a compound one by some rule); else None: ask."""
    allows: list[Scoped] = []
    for scoped in rules:
        if scoped.rule.tool != intent.tool:
            continue
        if not scoped.rule.allow:
            if scoped.rule.matches(intent):
                return Match(allow=False, by=(scoped,))
        else:
            allows.append(scoped)
    by = covering(intent, allows)
    return Match(allow=True, by=by) if by else None


def covering(intent: Intent, allows: Sequence[Scoped]) -> tuple[Scoped, ...]:
    """The allow rules that together cover the call; () when they don't."""
    whole = [s for s in allows if s.rule.matches(intent)]
    if whole:
        return (whole[0],)
    if intent.subject != "command" or intent.command is None:
        return ()
    segments = command_segments(intent.command)
    if not segments:
        return ()
    used: list[Scoped] = []
    for words in segments:
        found = next(
            (
                s
                for s in allows
                if s.rule._reaches(intent) and (s.rule.spec is None or s.rule.covers_words(words))
            ),
            None,
        )
        if found is None:
            return ()
        if found not in used:
            used.append(found)
    return tuple(used)


# -- what an 'always' answer creates ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Proposal:
    """The rules an 'always' answer on this call would create (allow form), or why none can be made (`no_rule`)."""

    rules: tuple[Rule, ...] = ()
    no_rule: str | None = None

    def scoped(self, allow: bool, intent: Intent) -> tuple[Rule, ...]:
        """The session rules for this answer: allow or deny, reaching as far as the answered call did."""
        return tuple(
            replace(r, allow=allow, outside=intent.scope == "outside", protected=intent.protected)
            for r in self.rules
        )

    def lasting(self, intent: Intent) -> bool:
        """Whether the rules, written in a file (no outside / protected reach), would cover the call again."""
        scoped = [Scoped(r, "project") for r in self.rules]
        return bool(scoped) and bool(covering(intent, scoped))


def propose(intent: Intent) -> Proposal:
    """One rule per simple command (a prefix of program and subcommand, or the exact words for code runners), the
    path for a file tool, the host for a URL tool, the tool itself otherwise."""
    if intent.subject == "command":
        if intent.command is None:
            return Proposal(no_rule="the call has no command")
        problem = segment_problem(intent.command)
        if problem is not None:
            return Proposal(no_rule=problem[0].upper() + problem[1:] + ".")
        found: list[Rule] = []
        for words in command_segments(intent.command) or ():
            spec, _ = command_rule(words)
            if redact(spec) != spec:
                return Proposal(no_rule="The command holds what looks like a secret, which no rule may keep.")
            rule = Rule(tool=intent.tool, spec=spec, allow=True)
            if rule not in found:
                found.append(rule)
        return Proposal(rules=tuple(found))
    if intent.subject == "path":
        if intent.operation == "unknown" or not intent.paths:
            return Proposal(no_rule="The call names no usable path.")
        path = intent.paths[0]
        if "\n" in path or "\0" in path:
            return Proposal(no_rule="The path has a newline or a NUL byte.")
        return Proposal(rules=(Rule(tool=intent.tool, spec=_literal_path(path), allow=True),))
    if intent.host is not None:
        return Proposal(rules=(Rule(tool=intent.tool, spec=intent.host.lower(), allow=True),))
    if intent.operation == "network" and intent.tool in ("web_fetch",):
        return Proposal(no_rule="The call has no host a rule could name.")
    return Proposal(rules=(Rule(tool=intent.tool, spec=None, allow=True),))


def _literal_path(path: str) -> str:
    """A path as a glob that matches only itself (`[*]` for a literal `*`)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in path)


def describe(rule: Rule, scope: RuleScope | None = None) -> str:
    """A rule in words: "allow `npm test` with any arguments in this project", "deny edits to `src/**`"."""
    verb = "allow" if rule.allow else "deny"
    where = {
        "session": " this session",
        "project": " in this project",
        "user": " in every project",
        None: "",
    }[scope]
    if rule.spec is None:
        return f"{verb} every call of `{rule.tool}`{where}"
    command = rule.command if rule.tool == "bash" else None
    if command is not None:
        words, prefix = command
        shown = " ".join(shellwords_quote(w) for w in words)
        return f"{verb} `{shown}`" + (" with any arguments" if prefix else " (exactly this command)") + where
    if rule.tool in ("web_fetch",):
        return f"{verb} fetching from `{rule.spec}`{where}"
    what = {"edit": "edits to", "write": "writes to", "read": "reads of"}.get(rule.tool, f"`{rule.tool}` on")
    return f"{verb} {what} `{rule.spec}`{where}"


# -- the session's rules ---------------------------------------------------------------------------------------------


class SessionRules:
    """The remembered answers of one session; consulted when the policy says `ask`. Reject rules win."""

    __slots__ = ("_rules",)

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self._rules: list[Rule] = list(rules)

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules in the order they were remembered."""
        return tuple(self._rules)

    def add(self, rule: Rule) -> Rule:
        """Store a rule (an old one with the same text and decision is replaced, keeping the wider reach)."""
        outside, protected = rule.outside, rule.protected
        for old in [
            r for r in self._rules if (r.tool, r.spec, r.allow) == (rule.tool, rule.spec, rule.allow)
        ]:
            outside, protected = outside or old.outside, protected or old.protected
            self._rules.remove(old)
        stored = replace(rule, outside=outside, protected=protected)
        self._rules.append(stored)
        return stored

    def remove(self, rule: Rule) -> bool:
        """Forget the rules with this text and decision; False if there were none."""
        old = [r for r in self._rules if (r.tool, r.spec, r.allow) == (rule.tool, rule.spec, rule.allow)]
        for r in old:
            self._rules.remove(r)
        return bool(old)

    def remember(self, intent: Intent, allow: bool) -> tuple[Rule, ...]:
        """Store an `allow_always` (True) or `reject_always` (False) answer as the rules `propose` shows on the
        card; () when none can be made (the card said why, and offered no 'always')."""
        return tuple(self.add(r) for r in propose(intent).scoped(allow, intent))

    def match(self, intent: Intent) -> bool | None:
        """False if a reject rule matches, else True if the allow rules cover the call, else None (ask the host)."""
        found = match(intent, (Scoped(r, "session") for r in self._rules))
        return None if found is None else found.allow

    def to_list(self) -> list[dict[str, Any]]:
        """A JSON-ready list for the session file."""
        return [
            {
                "rule": r.text,
                "decision": "allow_always" if r.allow else "reject_always",
                "outside": r.outside,
                "protected": r.protected,
            }
            for r in self._rules
        ]

    @classmethod
    def from_list(cls, items: Iterable[Mapping[str, Any]]) -> SessionRules:
        """Rebuild from `to_list()` output (or the older `{tool, pattern}` form); a malformed item raises
        SessionError."""
        rules: list[Rule] = []
        for index, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise SessionError(f"permission rule #{index} is not an object")
            decision = item.get("decision")
            outside, protected = item.get("outside", False), item.get("protected", False)
            if not isinstance(decision, str) or decision not in _DECISIONS:
                raise SessionError(f"permission rule #{index} has an unknown decision: {decision!r}")
            if not isinstance(outside, bool) or not isinstance(protected, bool):
                raise SessionError(f"permission rule #{index} has non-boolean outside/protected flags")
            allow = _DECISIONS[decision]
            try:
                rule = parse_rule(_text(item, index), "allow" if allow else "deny")
            except RuleError as exc:
                if "rule" not in item:  # an old session's `python3` prefix: no longer a rule, asked again
                    continue
                raise SessionError(f"permission rule #{index}: {exc}") from None
            rules.append(replace(rule, outside=outside, protected=protected))
        return cls(rules)


def _text(item: Mapping[str, Any], index: int) -> str:
    text = item.get("rule")
    if isinstance(text, str) and text:
        return text
    tool, pattern = item.get("tool"), item.get("pattern")  # sessions written before rules had a syntax
    if not isinstance(tool, str) or not tool or not isinstance(pattern, str) or not pattern:
        raise SessionError(f"permission rule #{index} needs a rule (or a non-empty tool and pattern)")
    if pattern == tool:
        return tool
    if tool == "bash":
        return f"bash({pattern} *)"
    return f"{tool}({_literal_path(pattern)})"


# -- the card: the options an 'ask' offers ---------------------------------------------------------------------------


def short(rule: Rule) -> str:
    """A rule as a few words for a button: "`npm test …`", "`python3 f`", "edits to `a.txt`"."""
    if rule.spec is None:
        return f"every `{rule.tool}` call"
    command = rule.command if rule.tool == "bash" else None
    if command is not None:
        words, prefix = command
        return f"`{' '.join(shellwords_quote(w) for w in words)}{' …' if prefix else ''}`"
    if rule.tool in ("web_fetch",):
        return f"fetching from `{rule.spec}`"
    what = {"edit": "edits to", "write": "writes to", "read": "reads of"}.get(rule.tool, f"`{rule.tool}` on")
    return f"{what} `{rule.spec}`"


def card(intent: Intent, *, project_trusted: bool) -> tuple[tuple[PermissionOption, ...], str | None]:
    """The options of a permission request and its `noRule`: allow once, allow always (session; project when the
    rule would apply there: no outside / protected reach), reject once, reject always (session; project when it
    would apply). No 'always' option when no rule can be made: `noRule` says why. In a project the user does not
    trust, project rules are kept in the user's own file for it (kgent.permissions.rulefiles), and the project
    options say so."""
    proposal = propose(intent)
    if intent.configures:  # no rule covers such a write (kgent.kernel asks for each one): none is offered
        proposal = Proposal(
            no_rule=f"Writes to {intent.configures[0]} (it configures Kgent or runs code later outside the sandbox) "
            "are asked every time."
        )
    once = PermissionOption(option_id="allow_once", kind="allow_once", name="Allow once")
    reject = PermissionOption(option_id="reject_once", kind="reject_once", name="Reject")
    if not proposal.rules:
        return (once, reject), proposal.no_rule or "No rule can describe this call."
    what = " and ".join(short(r) for r in proposal.rules)
    lasting = proposal.lasting(intent)

    def option(option_id: str, allow: bool, scope: RuleScope, name: str) -> PermissionOption:
        rules = tuple(replace(r, allow=allow) for r in proposal.rules)
        return PermissionOption(
            option_id=option_id,
            kind="allow_always" if allow else "reject_always",
            name=name,
            scope=scope,
            rules=tuple(RuleText(rule=r.text, text=describe(r, scope) + _caveat(r)) for r in rules),
        )

    mine = "" if project_trusted else " (kept in your settings)"
    options = [once, option("allow_always", True, "session", f"Allow {what} this session")]
    if lasting:
        options.append(
            option("allow_always_project", True, "project", f"Always allow {what} in this project{mine}")
        )
    options += [reject, option("reject_always", False, "session", f"Reject {what} this session")]
    if lasting:
        options.append(
            option("reject_always_project", False, "project", f"Always reject {what} in this project{mine}")
        )
    return tuple(options), None


def _caveat(rule: Rule) -> str:
    """For a prefix rule of a program with options that run programs: that the rule never covers them."""
    command = rule.command if rule.tool == "bash" else None
    if command is None or not command[1]:
        return ""
    found = caveat(command[0])
    return f" (never its options that run a program: {found}; those are asked each time)" if found else ""


def answer_scope(option_id: str) -> RuleScope:
    """How long an 'always' answer lasts, from the option's id."""
    return (
        "project" if option_id.endswith("_project") else "user" if option_id.endswith("_user") else "session"
    )


def runs_a_program(intent: Intent) -> str | None:
    """The option of a command (any of its simple commands) that runs another program: no allow rule covers it."""
    if intent.subject != "command" or intent.command is None:
        return None
    for words in loose_segments(intent.command):
        hit = executing(words)
        if hit is not None:
            return hit
    return None
