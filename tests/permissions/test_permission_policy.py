"""The decision matrix, written out row by row: every mode x operation x scope x protected, with action and risk."""

from __future__ import annotations

import itertools
import os
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgent.permissions import MODES, Intent, Mode, Operation, Scope, Verdict, decide, shell_grant
from kgent.sandbox.bwrap import Grant

# A change of policy must change this table. Columns: mode, operation, scope, protected, action, risk.
MATRIX = """
# mode operation scope     protected action risk
plan  read     workspace  no   allow low
plan  read     workspace  yes  ask   high
plan  read     outside    no   deny  high
plan  read     outside    yes  deny  high
plan  write    workspace  no   deny  medium
plan  write    workspace  yes  deny  high
plan  write    outside    no   deny  high
plan  write    outside    yes  deny  high
plan  shell    workspace  no   deny  high
plan  shell    workspace  yes  deny  high
plan  shell    outside    no   deny  high
plan  shell    outside    yes  deny  high
plan  network  workspace  no   deny  high
plan  network  workspace  yes  deny  high
plan  network  outside    no   deny  high
plan  network  outside    yes  deny  high
plan  unknown  workspace  no   deny  high
plan  unknown  workspace  yes  deny  high
plan  unknown  outside    no   deny  high
plan  unknown  outside    yes  deny  high
ask   read     workspace  no   allow low
ask   read     workspace  yes  ask   high
ask   read     outside    no   ask   high
ask   read     outside    yes  ask   high
ask   write    workspace  no   ask   medium
ask   write    workspace  yes  ask   high
ask   write    outside    no   ask   high
ask   write    outside    yes  ask   high
ask   shell    workspace  no   ask   high
ask   shell    workspace  yes  ask   high
ask   shell    outside    no   ask   high
ask   shell    outside    yes  ask   high
ask   network  workspace  no   ask   high
ask   network  workspace  yes  ask   high
ask   network  outside    no   ask   high
ask   network  outside    yes  ask   high
ask   unknown  workspace  no   ask   high
ask   unknown  workspace  yes  ask   high
ask   unknown  outside    no   ask   high
ask   unknown  outside    yes  ask   high
auto  read     workspace  no   allow low
auto  read     workspace  yes  ask   high
auto  read     outside    no   ask   high
auto  read     outside    yes  ask   high
auto  write    workspace  no   allow medium
auto  write    workspace  yes  ask   high
auto  write    outside    no   ask   high
auto  write    outside    yes  ask   high
auto  shell    workspace  no   ask   high
auto  shell    workspace  yes  ask   high
auto  shell    outside    no   ask   high
auto  shell    outside    yes  ask   high
auto  network  workspace  no   ask   high
auto  network  workspace  yes  ask   high
auto  network  outside    no   ask   high
auto  network  outside    yes  ask   high
auto  unknown  workspace  no   ask   high
auto  unknown  workspace  yes  ask   high
auto  unknown  outside    no   ask   high
auto  unknown  outside    yes  ask   high
full  read     workspace  no   allow low
full  read     workspace  yes  allow high
full  read     outside    no   allow high
full  read     outside    yes  allow high
full  write    workspace  no   allow medium
full  write    workspace  yes  allow high
full  write    outside    no   allow high
full  write    outside    yes  allow high
full  shell    workspace  no   allow high
full  shell    workspace  yes  allow high
full  shell    outside    no   allow high
full  shell    outside    yes  allow high
full  network  workspace  no   allow high
full  network  workspace  yes  allow high
full  network  outside    no   allow high
full  network  outside    yes  allow high
full  unknown  workspace  no   allow high
full  unknown  workspace  yes  allow high
full  unknown  outside    no   allow high
full  unknown  outside    yes  allow high
risk_based read     workspace  no   allow low
risk_based read     workspace  yes  deny  high
risk_based read     outside    no   deny  high
risk_based read     outside    yes  deny  high
risk_based write    workspace  no   allow medium
risk_based write    workspace  yes  deny  high
risk_based write    outside    no   deny  high
risk_based write    outside    yes  deny  high
risk_based shell    workspace  no   deny  high
risk_based shell    workspace  yes  deny  high
risk_based shell    outside    no   deny  high
risk_based shell    outside    yes  deny  high
risk_based network  workspace  no   deny  high
risk_based network  workspace  yes  deny  high
risk_based network  outside    no   deny  high
risk_based network  outside    yes  deny  high
risk_based unknown  workspace  no   deny  high
risk_based unknown  workspace  yes  deny  high
risk_based unknown  outside    no   deny  high
risk_based unknown  outside    yes  deny  high
"""

ROWS = [line.split() for line in MATRIX.strip().splitlines() if line and not line.startswith("#")]


def _intent(operation: str, scope: str, protected: bool) -> Intent:
    return Intent(
        tool="some_tool",
        operation=operation,  # type: ignore[arg-type]
        scope=scope,  # type: ignore[arg-type]
        protected=protected,
        reason="does something",
    )


def test_table_covers_every_combination_exactly_once() -> None:
    keys = [tuple(row[:4]) for row in ROWS]
    expected = itertools.product(MODES, get_args(Operation), get_args(Scope), ("no", "yes"))
    assert sorted(keys) == sorted(expected)
    assert len(keys) == 100


@pytest.mark.parametrize(("mode", "operation", "scope", "protected", "action", "risk"), ROWS)
def test_matrix_row(mode: str, operation: str, scope: str, protected: str, action: str, risk: str) -> None:
    verdict = decide(mode, _intent(operation, scope, protected == "yes"))  # type: ignore[arg-type]
    assert (verdict.action, verdict.risk) == (action, risk)


@pytest.mark.parametrize(
    ("mode", "operation", "scope", "protected", "words"),
    [
        ("plan", "write", "workspace", False, "plan mode"),
        ("plan", "read", "outside", False, "inside the workspace"),
        ("plan", "read", "workspace", True, "protected"),
        ("ask", "write", "workspace", False, "ask mode"),
        ("auto", "shell", "workspace", False, "shell"),
        ("auto", "network", "workspace", False, "network"),
        ("auto", "read", "outside", False, "leaving the workspace"),
        ("auto", "write", "workspace", True, "protected"),
        ("full", "shell", "outside", True, "full mode"),
    ],
)
def test_reason_says_what_the_call_does_and_why(
    mode: Mode, operation: str, scope: str, protected: bool, words: str
) -> None:
    verdict = decide(mode, _intent(operation, scope, protected))
    assert verdict.reason.startswith("does something; ")
    assert words in verdict.reason


def test_an_unnormalized_mode_is_a_bug_not_a_permission() -> None:
    with pytest.raises(ValueError, match="unknown permission mode"):
        decide("interactive", _intent("read", "workspace", False))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("operation", "scope", "protected", "action", "risk"), [row[1:] for row in ROWS if row[0] == "ask"]
)
def test_interactive_is_ask_allowing_low_risk_and_asking_medium_and_high(
    operation: str, scope: str, protected: str, action: str, risk: str
) -> None:
    """Seed 000's `interactive`: low risk runs, medium and high risk ask; that is `ask`, row for row."""
    assert action == ("allow" if risk == "low" else "ask")


@pytest.mark.parametrize("sandboxed", [True, False])
def test_risk_based_never_asks_and_never_runs_a_command_outside_the_sandbox(sandboxed: bool) -> None:
    create = _bash("write", command="mkdir -p build")
    read = _bash("read")
    for intent in (create, read):
        verdict = decide("risk_based", intent, sandboxed=sandboxed)
        assert verdict.action == ("allow" if sandboxed else "deny"), verdict
    unconfined = decide("risk_based", create, sandboxed=False)
    assert "no sandbox" in unconfined.reason and "risk_based mode denies it" in unconfined.reason
    other = decide("risk_based", _bash("shell", command="make"), sandboxed=True)
    assert (other.action, other.risk) == ("deny", "high")
    assert "risk_based mode denies high-risk calls" in other.reason
    # the same command in the other modes: auto and ask ask, plan denies
    assert decide("auto", create, sandboxed=True).action == "ask"
    assert decide("ask", create, sandboxed=True).action == "ask"
    assert decide("plan", create, sandboxed=True).action == "deny"


def test_a_medium_command_runs_with_the_workspace_writable_and_nothing_more() -> None:
    grant = shell_grant("risk_based", _bash("write", command="mkdir -p build"), approved=False)
    assert grant == Grant(write=True)
    assert grant is not None and not (grant.network or grant.outside or grant.secrets or grant.git)
    assert shell_grant("risk_based", _bash("read"), approved=False) == Grant()


@given(
    mode=st.sampled_from(MODES),
    operation=st.sampled_from(get_args(Operation)),
    scope=st.sampled_from(get_args(Scope)),
    protected=st.booleans(),
    reason=st.text(max_size=40),
)
def test_only_full_mode_allows_leaving_the_workspace_or_protected_files(
    mode: Mode, operation: str, scope: str, protected: bool, reason: str
) -> None:
    intent = Intent(tool="t", operation=operation, scope=scope, protected=protected, reason=reason)  # type: ignore[arg-type]
    verdict = decide(mode, intent)
    assert isinstance(verdict, Verdict)
    assert verdict.reason.startswith(reason)
    if mode == "full":
        assert verdict.action == "allow"
    elif scope == "outside" or protected:
        assert verdict.action != "allow"
        assert verdict.risk == "high"
    if mode == "plan" and operation != "read":
        assert verdict.action == "deny"
    if operation in ("shell", "network", "unknown"):
        assert verdict.risk == "high"
        assert verdict.action == "allow" if mode == "full" else verdict.action != "allow"


# --- shell commands and the sandbox ---------------------------------------------------------------------------


def _bash(
    operation: str,
    scope: str = "workspace",
    protected: bool = False,
    paths: tuple[str, ...] = (),
    command: str = "cat a",
) -> Intent:
    return Intent(
        tool="bash",
        operation=operation,
        scope=scope,
        protected=protected,  # type: ignore[arg-type]
        paths=paths,
        command=command,
        subject="command",
        reason="runs it",
    )


@pytest.mark.parametrize("mode", ["plan", "ask", "auto"])
def test_a_shell_read_runs_unasked_only_inside_the_sandbox(mode: Mode) -> None:
    assert decide(mode, _bash("read"), sandboxed=True).action == "allow"
    unconfined = decide(mode, _bash("read"), sandboxed=False)
    assert unconfined.action == "ask"
    assert "no sandbox" in unconfined.reason
    assert (
        decide(mode, _intent("read", "workspace", False), sandboxed=False).action == "allow"
    )  # file tools: no shell
    assert decide("full", _bash("shell"), sandboxed=False).action == "allow"
    elsewhere = decide(
        mode, _bash("read"), sandboxed=False, unsandboxed="shell commands run in the editor's terminal"
    )
    assert (
        elsewhere.action == "ask"
        and "the editor's terminal, so every shell command is asked" in elsewhere.reason
    )


def test_the_grant_follows_the_mode_and_the_approval() -> None:
    assert shell_grant("full", _bash("shell"), approved=True) is None  # full mode: no containment
    unasked = shell_grant("ask", _bash("read", command="git status"), approved=False)
    assert unasked == Grant(git=True)
    assert shell_grant("auto", _bash("read"), approved=False) == Grant()
    approved = shell_grant("ask", _bash("shell", command="make"), approved=True)
    assert approved == Grant(write=True, git=True, approved=True)
    plan = shell_grant("plan", _bash("read", protected=True, command="cat .env"), approved=True)
    assert plan is not None and not plan.write and plan.secrets
    net = shell_grant("auto", _bash("network", command="git push"), approved=True)
    assert net is not None and net.network and net.git_config
    out = shell_grant(
        "ask", _bash("read", scope="outside", paths=("/etc/hosts", "~/x", "src")), approved=True
    )
    assert out is not None and out.outside == ("/etc/hosts", os.path.expanduser("~/x"))
