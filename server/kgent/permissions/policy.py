# The permission matrix: mode × intent → allow, deny or ask the host, with a risk and a reason a person reads.
# Pure; remembered session decisions (rules.py) are consulted by the caller, only when the verdict is `ask`.

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from kgent.core.modes import MODES, Mode
from kgent.permissions import commands
from kgent.permissions.intent import Intent
from kgent.sandbox.bwrap import Grant

Action = Literal["allow", "deny", "ask"]
Risk = Literal["low", "medium", "high"]

_PROTECTED = "protected files need your approval"
_PRIVATE = "private network addresses need your approval"
_NO_SANDBOX = "there is no sandbox here (bubblewrap), so every shell command is asked"
_CONFIGURES = "writing files that configure Kgent or run code later is asked in every mode but full"
_READS_WORKSPACE = "reading the workspace is allowed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """The policy's answer for one call; `reason` starts with what the call does, then why this answer."""

    action: Action
    risk: Risk
    reason: str


def risk_of(intent: Intent) -> Risk:
    """Low for a read of the workspace (file tools, read-only commands), medium for a write in it (the file tools,
    a command that only creates directories or empty files), high for anything else: other commands, the network,
    anything outside the workspace, protected files, calls the policy cannot classify."""
    if intent.scope == "outside" or intent.protected or intent.configures:
        return "high"
    if intent.operation == "read":
        return "low"
    if intent.operation == "write":
        return "medium"
    return "high"


def _plan(intent: Intent) -> tuple[Action, str]:
    if intent.operation != "read":
        return "deny", "plan mode only reads, it never changes or runs anything"
    if intent.scope == "outside":
        return "deny", "plan mode only reads inside the workspace"
    if intent.protected:
        return "ask", _PROTECTED
    return "allow", _READS_WORKSPACE


def _ask(intent: Intent) -> tuple[Action, str]:
    if intent.protected:
        return "ask", _PRIVATE if intent.operation == "network" else _PROTECTED
    if intent.operation == "read" and intent.scope == "workspace":
        return "allow", _READS_WORKSPACE
    return "ask", "ask mode asks before anything but reading the workspace"


def _auto(intent: Intent) -> tuple[Action, str]:
    if intent.protected:
        return "ask", _PRIVATE if intent.operation == "network" else _PROTECTED
    if intent.scope == "outside":
        return "ask", "auto mode asks before leaving the workspace"
    if intent.operation == "read":
        return "allow", _READS_WORKSPACE
    if intent.operation == "write" and intent.subject != "command":
        return "allow", "auto mode may change files in the workspace"
    if intent.operation == "shell" or intent.subject == "command":
        return "ask", "auto mode asks before running shell commands"
    if intent.operation == "network":
        return "ask", "auto mode asks before using the network"
    return "ask", "auto mode asks before calls it cannot classify"


def _risk_based(risk: Risk) -> tuple[Action, str]:
    if risk == "high":
        return "deny", "risk_based mode denies high-risk calls (nobody is asked)"
    return "allow", f"risk_based mode allows {risk}-risk calls"


def decide(mode: Mode, intent: Intent, *, sandboxed: bool = False, unsandboxed: str | None = None) -> Verdict:
    """Apply the matrix: full allows all; plan reads only; ask allows workspace reads; auto adds workspace writes;
    risk_based allows low and medium risk and denies high risk (it never asks).

    Protected files ask in every mode but full (plan still denies what it would deny anyway), and so does a write to
    a file that configures Kgent or runs code later outside the sandbox (`intent.configures`; risk_based denies it). A shell command runs
    unasked only when it is a plain read and `sandboxed` (it will run inside the OS sandbox); otherwise it asks,
    saying why it is not sandboxed (`unsandboxed`, default: there is no sandbox here).
    """
    action: Action
    why: str
    if mode == "full":
        action, why = "allow", "full mode allows everything"
    elif mode == "plan":
        action, why = _plan(intent)
    elif mode == "ask":
        action, why = _ask(intent)
    elif mode == "auto":
        action, why = _auto(intent)
    elif mode == "risk_based":
        action, why = _risk_based(risk_of(intent))
    else:  # a str that escaped normalize_mode: a bug, not a reason to allow anything
        raise ValueError(f"unknown permission mode {mode!r}; expected one of {', '.join(MODES)}")
    if action == "allow" and mode != "full" and intent.configures:
        action, why = (
            ("deny", "risk_based mode denies writes to such files (nobody is asked)")
            if mode == "risk_based"
            else ("ask", _CONFIGURES)
        )
    if action == "allow" and mode != "full" and intent.subject == "command" and not sandboxed:
        if mode == "risk_based":  # nobody to ask, and risk_based never runs a command outside the sandbox
            action, why = (
                "deny",
                f"{unsandboxed or 'there is no sandbox here (bubblewrap)'}, so risk_based mode denies it",
            )
        else:
            action, why = (
                "ask",
                f"{unsandboxed}, so every shell command is asked" if unsandboxed else _NO_SANDBOX,
            )
    return Verdict(action=action, risk=risk_of(intent), reason=f"{intent.reason}; {why}")


def shell_grant(mode: Mode, intent: Intent, *, approved: bool) -> Grant | None:
    """What a shell call may touch inside the sandbox; None in full mode (no containment).

    A call the mode allowed unasked is a plain read: the workspace read-only, protected files hidden, no network;
    or (risk_based) a command that only creates in the workspace: the same, with the workspace writable.
    An approved call (a person, or their remembered answer) may also write the workspace (not in plan), reach the
    outside paths it names, use the network when it was asked as a network call, and see the protected files it
    names.
    """
    if mode == "full":
        return None
    runs_git = "git" in commands.programs(intent.command or "")
    # risk_based's medium command (it only creates in the workspace): the workspace writable, nothing more
    if not approved and intent.operation == "write":
        return Grant(write=True)
    if not approved:
        return Grant(git=runs_git)
    outside: tuple[str, ...] = ()
    if intent.scope == "outside":
        outside = tuple(os.path.expanduser(p) for p in intent.paths if p.startswith(("/", "~")))
    return Grant(
        write=mode != "plan",
        network=intent.operation == "network",
        outside=outside,
        secrets=intent.protected,
        git=True,
        git_config=runs_git,
        approved=True,
    )
