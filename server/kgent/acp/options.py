"""A permission prompt's options as ACP clients show them: one option per `kind` (CodeCompanion and avante key options
by kind, avante sorts them by name), each option's id its kind, and the lasting scope of the two *always* options
taken from the session's `lasting` config option instead of a second option of the same kind.

A client known by name (`clientInfo.name` in `initialize`, or KGENT_ACP_CLIENT for one that sends none, as avante)
is offered only the choices it shows, each named for what that client then does (docs/acp.md § What a person sees,
per client, read from their sources): none of the three shows a `reject_always` (CodeCompanion has no key for it,
agent-shell no button, avante sends it as a plain reject); avante answers every later request itself once
`allow_always` is chosen, so there that option makes no rule of Kgent's and says so; agent-shell cancels the turn
after a reject, so its reject says that."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from acp import schema as S

from kgent.core.events import PermissionOption, PermissionOptionKind

from .setup import Lasting

_ORDER: tuple[PermissionOptionKind, ...] = ("allow_once", "allow_always", "reject_once", "reject_always")

ClientKind = Literal["other", "avante", "codecompanion", "agent-shell"]
CLIENTS: tuple[ClientKind, ...] = ("avante", "codecompanion", "agent-shell")
# avante.nvim: after "allow_always" it answers every later request of the connection "allow_always" itself.
AVANTE_ALWAYS = "Allow this and every later call without asking"
# agent-shell: a reject is followed by session/cancel (it interrupts the turn).
AGENT_SHELL_REJECT = "Reject and stop the turn"


def client_kind(name: str | None, env: Mapping[str, str]) -> ClientKind:
    """The client whose choices Kgent names: KGENT_ACP_CLIENT (set in the client's agent config) wins, else the
    `clientInfo.name` it sent (CodeCompanion sends "CodeCompanion.nvim", agent-shell "agent-shell")."""
    chosen = env.get("KGENT_ACP_CLIENT", "").strip().lower()
    if chosen in CLIENTS:
        return chosen
    sent = (name or "").lower()
    for kind in CLIENTS:
        if kind.replace("-", "") in sent.replace("-", "").replace(" ", ""):
            return kind
    return "other"


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


def offer(options: Sequence[PermissionOption], lasting: Lasting, client: ClientKind = "other") -> Offer:
    """One option of each kind Kgent offers, in the order allow once, allow always, reject once, reject always; an
    *always* option lasts as `lasting` says (the session's when the call has no project rule). A known `client`
    gets the choices it shows, named for what it does with them."""
    chosen: dict[str, PermissionOption] = {}
    for option in options:
        current = chosen.get(option.kind)
        if current is None or (option.scope == lasting and current.scope != lasting):
            chosen[option.kind] = option
    names: dict[str, str] = {}  # a known client's own words for what a choice does there
    if client != "other":
        chosen.pop("reject_always", None)
    if client == "avante":
        # avante's own "always" (its answer to every later request, even one Kgent can make no rule for): each call
        # it answers so is allowed once here, and no rule of Kgent's is made
        chosen.pop("allow_always", None)
        if (once := chosen.get("allow_once")) is not None:
            chosen["allow_always"] = once
            names["allow_always"] = AVANTE_ALWAYS
    if client == "agent-shell":
        names["reject_once"] = AGENT_SHELL_REJECT
    sent: list[S.PermissionOption] = []
    answers: dict[str, str] = {}
    for kind in _ORDER:
        if (picked := chosen.get(kind)) is not None:
            name = names.get(kind) or _name(picked)
            meta = None if kind in names else _meta(picked)
            sent.append(S.PermissionOption(option_id=kind, name=name, kind=kind, field_meta=meta))
            answers[kind] = picked.option_id
    return Offer(sent, answers)
