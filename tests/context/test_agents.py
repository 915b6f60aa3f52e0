"""Sub-agent definitions on real disk: the front matter Kgent reads (and Claude Code's spellings of it), where they are
found and which finder wins, what the files gate leaves out, the mode order, and what the system prompt lists."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import get_args

import pytest

from kgent.context.agents import (
    MAX_BYTES,
    MODE_ORDER,
    AgentDefinition,
    agent_dirs,
    defined,
    discover,
    instructions_section,
    narrower,
    parse,
    prompt_section,
    resolve_tools,
)
from kgent.kernel.prompt import system_prompt
from kgent.permissions import MODES, decide
from kgent.permissions.intent import Intent, Operation, Scope, Subject
from kgent.providers.base import ToolSchema

REVIEWER = """\
---
name: reviewer
description: >
  Reviews a change for bugs
  and says where they are.
tools: [read, grep]
mode: plan
model: cheap-model
---

Read the files you are given. Never edit anything.
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_a_definition_is_its_front_matter_and_its_body(tmp_path: Path) -> None:
    d = parse(REVIEWER, path="/x/reviewer.md", source="project", default_name="other")
    assert d == AgentDefinition(
        name="reviewer",
        description="Reviews a change for bugs and says where they are.",
        path="/x/reviewer.md",
        source="project",
        instructions="Read the files you are given. Never edit anything.",
        tools=("read", "grep"),
        mode="plan",
        model="cheap-model",
    )
    # Claude Code's file as it is: a comma list of its tool names, `model: inherit`, no mode; the name from the file
    claude = "---\ndescription: Finds code\ntools: Read, Grep, Glob\nmodel: inherit\n---\nSearch well.\n"
    c = parse(claude, path="/x/finder.md", source="user", default_name="finder")
    assert (c.name, c.tools, c.model, c.mode) == ("finder", ("Read", "Grep", "Glob"), None, None)
    # a YAML block list, at the margin or indented; quoted names; no tools at all; an alias of a mode
    block = "---\nname: b\ndescription: d\ntools:\n- read\n  - 'ls'\nmode: Interactive\n---\n"
    assert parse(block, path="p", source="user", default_name="b").tools == ("read", "ls")
    assert parse(block, path="p", source="user", default_name="b").mode == "ask"
    assert parse(
        '---\ndescription: d\ntools: ["read"]\n---\n', path="p", source="user", default_name="q"
    ).tools == ("read",)
    none = parse("---\ndescription: d\n---\nbody", path="p", source="user", default_name="n")
    assert none.tools is None and none.instructions == "body"
    assert (
        parse("---\ndescription: d\ntools: []\n---\n", path="p", source="user", default_name="e").tools == ()
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no front matter at all", "it has no front matter"),
        ("---\ndescription: never closed\n", "it has no front matter"),
        ("---\nname: x\n---\nbody", "it has no `description`"),
        ("---\nname: Has Spaces\ndescription: d\n---\n", "its name 'Has Spaces' is not lower-case letters"),
        ("---\ndescription: d\nmode: yolo\n---\n", "its `mode`: unknown permission mode 'yolo'"),
    ],
)
def test_what_is_no_definition_is_left_out_saying_why(tmp_path: Path, text: str, reason: str) -> None:
    folder = tmp_path / "ws" / ".kgent" / "agents"
    write(folder, "bad.md", text)
    write(folder, "good.md", "---\ndescription: fine\n---\n")
    write(folder, "notes.txt", "---\ndescription: not markdown\n---\n")
    found, skipped = defined(tmp_path / "ws", tmp_path / "no-user-dir")
    assert [d.name for d in found] == ["good"]
    [left] = skipped
    assert left.path == str(folder / "bad.md") and left.reason.startswith(reason)


def test_the_project_wins_over_the_user_and_each_is_read_through_the_gate(tmp_path: Path) -> None:
    ws, user, elsewhere = tmp_path / "ws", tmp_path / "user", tmp_path / "elsewhere"
    project = ws / ".kgent" / "agents"
    write(project, "reviewer.md", "---\ndescription: the project's\n---\n")
    write(user / "agents", "reviewer.md", "---\ndescription: the user's\n---\n")
    write(user / "agents", "writer.md", "---\ndescription: writes\ntools: read, edit\n---\n")
    outside = write(elsewhere, "linked.md", "---\ndescription: lives elsewhere\n---\n")
    os.symlink(outside, project / "linked.md")  # a project's link out: never read
    os.symlink(outside, user / "agents" / "mine.md")  # the user's own link: fine
    secret = write(ws, ".env", "---\ndescription: a secret\n---\n")
    os.symlink(secret, user / "agents" / "secret.md")  # to a secret: never, not even the user's
    twin = write(project, "twin.md", "---\ndescription: two names\n---\n")
    os.link(twin, ws / "twin.md")  # a project file with two names: its other may be anywhere
    write(project, "huge.md", "---\ndescription: big\n---\n" + "x" * MAX_BYTES)
    (project / "folder.md").mkdir()  # no file: not a definition, and nothing to say

    found, skipped = discover(agent_dirs(ws, user), ws)
    assert [(d.name, d.source, d.description) for d in found] == [
        ("mine", "user", "lives elsewhere"),
        ("reviewer", "project", "the project's"),
        ("writer", "user", "writes"),
    ]
    reasons = {Path(s.path).name: s.reason for s in skipped}
    assert set(reasons) == {"linked.md", "secret.md", "twin.md", "huge.md"}
    assert "outside" in reasons["linked.md"] and "protected" in reasons["secret.md"]
    assert "hard link" in reasons["twin.md"] and "larger than" in reasons["huge.md"]
    # no folders at all: nothing, and nothing to say
    assert discover(agent_dirs(tmp_path / "empty", None), tmp_path / "empty") == ([], [])


def test_a_project_folder_that_leads_outside_is_named(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "out"
    write(out, "a.md", "---\ndescription: out there\n---\n")
    (ws / ".kgent").mkdir(parents=True)
    os.symlink(out, ws / ".kgent" / "agents")
    found, skipped = defined(ws, tmp_path / "no-user")
    assert found == [] and [Path(s.path).name for s in skipped] == ["agents"]
    assert "outside" in skipped[0].reason


def test_the_mode_order_is_every_mode_and_narrower_is_its_minimum() -> None:
    assert sorted(MODE_ORDER) == sorted(MODES)
    for a, b in itertools.product(MODES, MODES):
        low = narrower(a, b)
        assert low in (a, b) and low == narrower(b, a)
        assert MODE_ORDER.index(low) == min(MODE_ORDER.index(a), MODE_ORDER.index(b))
    assert narrower("full", "plan") == "plan" and narrower("auto", "risk_based") == "auto"
    assert narrower("ask", "risk_based") == "ask" and narrower("full", "full") == "full"


def _intents() -> list[tuple[Intent, bool]]:
    """Every kind of call the policy tells apart, with and without a sandbox."""
    out = []
    for op, scope, protected, subject, configures, sandboxed in itertools.product(
        get_args(Operation), get_args(Scope), (False, True), get_args(Subject), (False, True), (False, True)
    ):
        if configures and op != "write":
            continue
        intent = Intent(
            tool="t",
            operation=op,
            scope=scope,
            protected=protected,
            subject=subject,
            reason="r",
            configures=(".kgent/x",) if configures else (),
        )
        out.append((intent, sandboxed))
    return out


def test_along_the_mode_order_each_mode_runs_unasked_all_the_earlier_one_does() -> None:
    """What "narrower" means, checked against the permission matrix itself: the calls a mode allows on its own grow
    along MODE_ORDER, so the narrower of two modes never runs unasked what either would not; and of plan and ask,
    which run the same calls unasked, plan refuses what ask would ask."""
    cases = _intents()

    def verdicts(mode: str) -> list[str]:
        return [decide(mode, i, sandboxed=s).action for i, s in cases]  # type: ignore[arg-type]

    for earlier, later in itertools.pairwise(MODE_ORDER):
        pairs = list(zip(verdicts(earlier), verdicts(later), strict=True))
        assert all(b == "allow" for a, b in pairs if a == "allow"), (earlier, later)
    plan, ask = verdicts("plan"), verdicts("ask")
    assert [v == "allow" for v in plan] == [v == "allow" for v in ask]
    assert all(b != "deny" for a, b in zip(plan, ask, strict=True) if a != "deny")
    assert any(a == "deny" and b == "ask" for a, b in zip(plan, ask, strict=True))


def test_tool_names_resolve_as_this_run_names_them() -> None:
    here = ["read", "grep", "find", "ls", "web_fetch", "mcp__git__Log"]
    assert resolve_tools(["Read", "Grep", "Glob", "WebFetch", "LS", "read"], here) == (
        ["read", "grep", "find", "web_fetch", "ls"],
        [],
    )
    assert resolve_tools(["mcp__git__Log", "Edit", "nope"], here) == (["mcp__git__Log"], ["Edit", "nope"])


def _schemas(*names: str) -> list[ToolSchema]:
    return [ToolSchema(name=n, description="", parameters={}) for n in names]


def test_the_system_prompt_lists_them_only_beside_the_task_tool(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / ".kgent" / "agents", "reviewer.md", REVIEWER)
    write(ws / ".kgent" / "agents", "helper.md", "---\ndescription: Helps out\n---\nBe kind.")
    with_task = system_prompt(str(ws), _schemas("read", "task"), day="2025-01-01")
    assert (
        "Sub-agents defined for this workspace: to hand a task to one, call the task tool with `agent` set to its "
        "name" in with_task
    )
    listing = (
        "- helper: Helps out\n- reviewer: Reviews a change for bugs and says where they are. (tools: read, grep; "
        "mode: plan)\n\nSession started on: 2025-01-01"
    )
    assert listing in with_task
    assert "cheap-model" not in with_task and "Be kind" not in with_task  # no model, no body
    assert "Sub-agents" not in system_prompt(str(ws), _schemas("read"), day="2025-01-01")
    assert "Sub-agents" not in system_prompt(str(tmp_path), _schemas("task"), day="2025-01-01")
    given = system_prompt(str(ws), _schemas("task"), day="2025-01-01", agents_defined=[])
    assert "Sub-agents" not in given  # the caller's list, not the disk's
    assert prompt_section([]) == ""


def test_a_defined_sub_agents_instructions_say_who_it_is_and_its_body() -> None:
    d = parse(REVIEWER, path="/x/reviewer.md", source="project", default_name="r")
    assert instructions_section(d) == (
        "You are the sub-agent `reviewer`: Reviews a change for bugs and says where they are.\n"
        "Your instructions (/x/reviewer.md):\nRead the files you are given. Never edit anything."
    )
    bare = parse("---\ndescription: d\n---\n", path="p", source="user", default_name="bare")
    assert instructions_section(bare) == "You are the sub-agent `bare`: d"
