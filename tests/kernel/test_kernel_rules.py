"""The kernel's rules: an 'always' answer creates the rules its option showed (session or the project's file), the
next matching call is decided by them without asking, the files are read again when they change, and when no rule
can be made the request says why and offers no 'always'."""

from __future__ import annotations

import asyncio
import os
import tomllib
from pathlib import Path
from typing import Any

from helpers import collect
from kgent.core.events import Event, PermissionRequest, PermissionResolved, ToolUpdate
from kgent.ext.trust import set_trusted
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider

COMPOUND = "grep -n value sample.py && python3 sample.py"


def _kernel(*commands: str) -> AgentKernel:
    turns: list[list[dict[str, Any]]] = [
        [{"tool": "bash", "args": {"command": c}, "id": f"call_{i}"}] for i, c in enumerate(commands)
    ]
    return AgentKernel(ScriptedProvider([*turns, [{"text": "done"}]]), config=KernelConfig(mode="ask"))


def _asked(events: list[Event]) -> list[PermissionRequest]:
    return [e for e in events if isinstance(e, PermissionRequest)]


def _resolved(events: list[Event]) -> list[PermissionResolved]:
    return [e for e in events if isinstance(e, PermissionResolved)]


def _project_rules(workspace: Path) -> dict[str, Any]:
    return tomllib.loads((workspace / ".kgent" / "config.toml").read_text())["permissions"]


async def test_always_on_a_compound_command_is_not_asked_again(workspace: Path) -> None:
    kernel = _kernel(COMPOUND, COMPOUND, "grep -c value sample.py && python3 sample.py")
    events = await collect(kernel.create_run("check", workspace=workspace), "allow_always")
    asked = _asked(events)
    assert len(asked) == 1
    always = next(o for o in asked[0].options if o.option_id == "allow_always")
    assert always.scope == "session"
    assert [r.rule for r in always.rules] == ["bash(grep *)", "bash(python3 sample.py)"]
    assert always.name == "Allow `grep …` and `python3 sample.py` this session"
    assert [r.source for r in _resolved(events)] == ["host", "session_rule", "session_rule"]
    assert "session rules `bash(grep *)`, `bash(python3 sample.py)`" in _resolved(events)[1].reason
    # what every front shows: the answer and how long it lasts, then the rule that decided
    assert [r.label for r in _resolved(events)] == [
        "always allowed this session",
        "allowed by the session rules `bash(grep *)`, `bash(python3 sample.py)`",
        "allowed by the session rules `bash(grep *)`, `bash(python3 sample.py)`",
    ]
    outputs = [e.output for e in events if isinstance(e, ToolUpdate) and e.status == "completed"]
    assert len(outputs) == 3


async def test_an_interpreter_gets_only_its_exact_command(workspace: Path) -> None:
    kernel = _kernel("python3 sample.py", "python3 -c 'print(3)'")
    events = await collect(kernel.create_run("check", workspace=workspace), "allow_always")
    assert len(_asked(events)) == 2  # the second python3 command line is another command


async def test_no_rule_says_why_and_offers_no_always(workspace: Path) -> None:
    kernel = _kernel("for i in $(seq 1 3); do echo $i; done")
    events = await collect(kernel.create_run("loop", workspace=workspace), "allow_once")
    (asked,) = _asked(events)
    assert [o.option_id for o in asked.options] == ["allow_once", "reject_once"]
    assert asked.no_rule is not None and "substitution" in asked.no_rule


async def test_allow_always_in_this_project_writes_the_file_and_lasts(workspace: Path) -> None:
    set_trusted(workspace, True)
    (workspace / ".kgent").mkdir()
    (workspace / ".kgent" / "config.toml").write_text("# ours\n[extensions]\nload = []\n")
    first = _kernel("python3 sample.py", "cp sample.py a.py")
    events = await collect(first.create_run("check", workspace=workspace), lambda _: "allow_always_project")
    assert len(_asked(events)) == 2
    assert _project_rules(workspace) == {"allow": ["bash(python3 sample.py)", "bash(cp *)"]}
    assert (workspace / ".kgent" / "config.toml").read_text().startswith("# ours\n[extensions]\nload = []\n")
    # another kernel (another front, a restart): a new session is not asked
    second = _kernel("cp sample.py b.py", "python3 sample.py")
    events = await collect(second.create_run("again", workspace=workspace), "reject_once")
    assert _asked(events) == []
    assert all("project rule" in r.reason for r in _resolved(events))


def _personal_rules(workspace: Path) -> dict[str, Any]:
    from kgent.permissions.rulefiles import RuleFiles

    text = RuleFiles().personal_path(workspace).read_text()
    assert text.startswith(f'# Kgent: your own permission rules for "{workspace.resolve()}"')
    return tomllib.loads(text)["permissions"]


async def test_an_untrusted_project_keeps_its_always_answers_in_the_users_own_file(workspace: Path) -> None:
    kernel = _kernel("cp sample.py a.py", "cp sample.py b.py", "python3 sample.py")
    answers = iter(["allow_always_project", "reject_always_project"])
    events = await collect(kernel.create_run("check", workspace=workspace), lambda _: next(answers))
    first, second = _asked(events)
    assert "allow_always_project" in [o.option_id for o in first.options]
    assert [r.source for r in _resolved(events)] == ["host", "project_rule", "host"]
    assert "allowed by the project rule `bash(cp *)`" in _resolved(events)[1].reason
    assert [r.label for r in _resolved(events)] == [
        "always allowed in this project",
        "allowed by the project rule `bash(cp *)`",
        "always rejected in this project",
    ]
    # nothing written into the repository: the rules are the user's, for this project
    assert not (workspace / ".kgent").exists()
    assert _personal_rules(workspace) == {"allow": ["bash(cp *)"], "deny": ["bash(python3 sample.py)"]}
    # a new session (another front, a restart), the project still untrusted: decided by them, nobody asked
    again = _kernel("cp sample.py c.py", "python3 sample.py")
    events = await collect(again.create_run("again", workspace=workspace), "allow_once")
    assert _asked(events) == []
    assert [r.approved for r in _resolved(events)] == [True, False]
    # a project file's allow still needs trust; the user's own rules for it do not
    (workspace / ".kgent").mkdir()
    (workspace / ".kgent" / "config.toml").write_text('[permissions]\nallow = ["bash(mv *)"]\n')
    moved = _kernel("mv a.py d.py")
    events = await collect(moved.create_run("move", workspace=workspace), "reject_once")
    assert len(_asked(events)) == 1


async def test_a_rule_file_edited_by_hand_applies_to_the_next_call(workspace: Path) -> None:
    set_trusted(workspace, True)
    config = workspace / ".kgent" / "config.toml"
    config.parent.mkdir()
    config.write_text("[permissions]\nallow = []\n")
    kernel = _kernel("cp sample.py a.py", "cp sample.py b.py")

    def answer(request: PermissionRequest) -> str:
        config.write_text('[permissions]\nallow = ["bash(cp *)"]\n')  # meanwhile, by hand
        st = config.stat()
        os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        return "allow_once"

    events = await collect(kernel.create_run("check", workspace=workspace), answer)
    assert len(_asked(events)) == 1
    assert _resolved(events)[1].source == "project_rule" and "project rule" in _resolved(events)[1].reason


async def test_an_edit_rule_says_which_file(workspace: Path) -> None:
    script = [
        [{"tool": "edit", "args": {"path": "sample.py", "oldText": "value = 1", "newText": "value = 2"}}],
        [{"tool": "edit", "args": {"path": "sample.py", "oldText": "value = 2", "newText": "value = 3"}}],
        [{"text": "done"}],
    ]
    kernel = AgentKernel(ScriptedProvider(script), config=KernelConfig(mode="ask"))
    events = await collect(kernel.create_run("edit", workspace=workspace), "allow_always")
    (asked,) = _asked(events)
    always = next(o for o in asked.options if o.option_id == "allow_always")
    assert always.name == "Allow edits to `sample.py` this session"
    assert always.rules[0].text == "allow edits to `sample.py` this session"
    assert (workspace / "sample.py").read_text().startswith("value = 3")


async def test_a_rules_entry_left_by_a_rules_view_is_restored_on_resume(workspace: Path) -> None:
    from kgent.session.entries import new_entry

    kernel = _kernel("cp sample.py a.py", "cp sample.py b.py")
    first = kernel.create_run("check", workspace=workspace)
    await collect(first, "allow_once")
    await first.result()
    await asyncio.sleep(0)  # done callbacks run one loop step after the result is set (the kernel forgets it)
    tree = await kernel.store.load(first.session_id)
    rules = [{"rule": "bash(cp *)", "decision": "allow_always", "outside": False, "protected": False}]
    await kernel.store.append(first.session_id, [new_entry("rules", tree.leaf_id, rules=rules)])
    again = kernel.create_run("again", workspace=workspace, session_id=first.session_id)
    events = await collect(again, "reject_once")
    assert _asked(events) == []
    assert all("session rule `bash(cp *)`" in r.reason for r in _resolved(events))


async def test_each_decision_says_who_decided_and_for_how_long(workspace: Path) -> None:
    """permission_resolved's source and label (issue 36 point 3, issue 40): a user rule is a user rule, not a
    session's; the mode's refusal names the mode; every front shows the label as it is."""
    from kgent.permissions.rulefiles import RuleFiles

    user = RuleFiles().user_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[permissions]\nallow = ["bash(cp *)"]\ndeny = ["bash(rm *)"]\n')
    kernel = _kernel("cp sample.py a.py", "rm a.py", "python3 sample.py")
    events = await collect(kernel.create_run("check", workspace=workspace), "reject_once")
    resolved = _resolved(events)
    assert [(r.source, r.approved) for r in resolved] == [
        ("user_rule", True),
        ("user_rule", False),
        ("host", False),
    ]
    assert [r.label for r in resolved] == [
        "allowed by the user rule `bash(cp *)`",
        "denied by the user rule `bash(rm *)`",
        "rejected",
    ]
    plan = AgentKernel(
        ScriptedProvider([[{"tool": "bash", "args": {"command": "python3 sample.py"}}], [{"text": "ok"}]]),
        config=KernelConfig(mode="plan"),
    )
    events = await collect(plan.create_run("check", workspace=workspace), "allow_once")
    assert [(r.source, r.label) for r in _resolved(events)] == [("policy", "rejected by the plan mode")]
