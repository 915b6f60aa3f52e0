"""A permission prompt's options as ACP clients show them: one option per `kind` (CodeCompanion and avante key options
by kind, avante sorts them by name), each option's id its kind, and the lasting scope of the two *always* options
taken from the session's `lasting` config option instead of a second option of the same kind."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from acp import schema as S

from kgent.core.events import PermissionOption, PermissionOptionKind

Lasting = Literal["session", "project"]
LASTING: tuple[tuple[Lasting, str, str], ...] = (
    ("session", "This session", "An 'always' answer makes a rule for this session only."),
    (
        "project",
        "This project",
        "An 'always' answer makes a rule for this project (its .kgent/config.toml, or your own file for it while "
        "the project is not trusted), kept for the next sessions.",
    ),
)
_ORDER: tuple[PermissionOptionKind, ...] = ("allow_once", "allow_always", "reject_once", "reject_always")


@dataclass(frozen=True, slots=True)
class Offer:
    """The options sent, and the Kgent option each ACP option id stands for."""

    options: list[S.PermissionOption]
    answers: dict[str, str]

    def decision(self, option_id: str) -> str:
        """The Kgent option id of an ACP answer; an id that was not offered stays as it is (the service rejects it)."""
        return self.answers.get(option_id, option_id)


def _meta(option: PermissionOption) -> dict[str, Any] | None:
    """An 'always' option's scope and rules (protocol.md § agent/permission) for clients that read `_meta`; its
    name says the same in words for those that do not."""
    if option.scope is None:
        return None
    rules = [{"rule": r.rule, "text": r.text} for r in option.rules]
    return {"kgent": {"scope": option.scope, "rules": rules}}


def _name(option: PermissionOption) -> str:
    """ "Allow once" first and "Reject" last when sorted by name (avante does): the *always* options start with
    "Always" ("Allow `x` this session" becomes "Always allow `x` this session")."""
    if option.kind in ("allow_always", "reject_always") and not option.name.startswith("Always"):
        verb, _, rest = option.name.partition(" ")
        return f"Always {verb.lower()} {rest}" if rest else f"Always {verb.lower()}"
    return option.name


def offer(options: Sequence[PermissionOption], lasting: Lasting) -> Offer:
    """One option of each kind Kgent offers, in the order allow once, allow always, reject once, reject always; an
    *always* option lasts as `lasting` says (the session's when the call has no project rule)."""
    chosen: dict[str, PermissionOption] = {}
    for option in options:
        current = chosen.get(option.kind)
        if current is None or (option.scope == lasting and current.scope != lasting):
            chosen[option.kind] = option
    sent: list[S.PermissionOption] = []
    answers: dict[str, str] = {}
    for kind in _ORDER:
        if (picked := chosen.get(kind)) is not None:
            sent.append(
                S.PermissionOption(option_id=kind, name=_name(picked), kind=kind, field_meta=_meta(picked))
            )
            answers[kind] = picked.option_id
    return Offer(sent, answers)
