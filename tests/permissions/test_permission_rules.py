"""Session rules: an 'always' answer creates the rules the card showed (one per simple command, exact for code
runners, a path, a host, a tool); reject wins; an allow never reaches wider than the call it answered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgent.core.errors import SessionError
from kgent.permissions import Intent, Rule, SessionRules, classify, propose


def _bash(workspace: Path, command: str) -> Intent:
    return classify("bash", {"command": command}, workspace)


def _file(workspace: Path, tool: str, path: str) -> Intent:
    return classify(tool, {"path": path, "content": "x"}, workspace)


def _specs(rules: tuple[Rule, ...]) -> list[str]:
    return [r.text for r in rules]


def test_nothing_remembered_means_ask(workspace: Path) -> None:
    assert SessionRules().match(_bash(workspace, "pytest")) is None


def test_allow_always_for_a_write_covers_that_path_only(workspace: Path) -> None:
    rules = SessionRules()
    assert _specs(rules.remember(_file(workspace, "write", "src/a.py"), True)) == ["write(src/a.py)"]
    assert rules.match(_file(workspace, "write", "src/a.py")) is True
    assert rules.match(_file(workspace, "write", "./src/a.py")) is True  # same file, other spelling
    assert rules.match(_file(workspace, "write", "src/b.py")) is None
    assert rules.match(_file(workspace, "edit", "src/a.py")) is None  # per tool


def test_allow_always_for_a_command_prefix_covers_its_arguments(workspace: Path) -> None:
    rules = SessionRules()
    assert _specs(rules.remember(_bash(workspace, "pytest"), True)) == ["bash(pytest *)"]
    assert rules.match(_bash(workspace, "pytest -k x")) is True
    assert rules.match(_bash(workspace, "pytest tests/test_a.py -q")) is True
    assert rules.match(_bash(workspace, "pytestx")) is None
    assert rules.match(_bash(workspace, "python -m pytest")) is None


def test_allow_always_with_a_subcommand_covers_only_that_subcommand(workspace: Path) -> None:
    rules = SessionRules()
    assert _specs(rules.remember(_bash(workspace, "git commit -m 'a message'"), True)) == [
        "bash(git commit *)"
    ]
    assert rules.match(_bash(workspace, "git commit --amend")) is True
    assert rules.match(_bash(workspace, "git push")) is None
    assert rules.match(_bash(workspace, "git")) is None


@pytest.mark.parametrize(
    ("command", "rules"),
    [
        # the compound command: one rule per simple command, the interpreter's exact
        ("grep -n x f && python3 f", ["bash(grep *)", "bash(python3 f)"]),
        ("ls | wc -l", ["bash(ls *)", "bash(wc *)"]),
        ("npm test 2>&1 | tail -5", ["bash(npm test *)", "bash(tail *)"]),
        ("npm run build --prod", ["bash(npm run build *)"]),
        ("python3 -m pytest -q", ["bash(python3 -m pytest -q)"]),
        ("uv run pytest -x", ["bash(uv run pytest -x)"]),
        ("bash -c 'rm -rf x'", ["bash(bash -c 'rm -rf x')"]),
        ("npx prettier .", ["bash(npx prettier .)"]),
        ("env FOO=1 make", ["bash(env FOO=1 make)"]),
        ("git -C sub status", ["bash(git -C sub status)"]),
        ("docker compose up -d", ["bash(docker compose up *)"]),
        ("./deploy.sh now", ["bash(./deploy.sh now)"]),
    ],
)
def test_an_always_answer_makes_one_rule_per_simple_command(
    workspace: Path, command: str, rules: list[str]
) -> None:
    proposal = propose(_bash(workspace, command))
    assert proposal.no_rule is None
    assert _specs(proposal.rules) == rules


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("for i in $(seq 1 15); do echo $i; done", "substitution"),
        ("cat <<EOF\nx\nEOF", "redirection"),
        ("echo hi > out.txt", "redirection to a file"),
        ("API_KEY=sk-live-123 python deploy.py", "environment variable"),
        ("", "empty"),
        ("python3 deploy.py --password=hunter2xyz", "secret"),
    ],
)
def test_no_rule_says_why(workspace: Path, command: str, why: str) -> None:
    proposal = propose(_bash(workspace, command))
    assert proposal.rules == ()
    assert proposal.no_rule is not None and why in proposal.no_rule
    assert SessionRules().remember(_bash(workspace, command), True) == ()


def test_a_compound_command_is_not_asked_again_after_always(workspace: Path) -> None:
    """The issue's first bullet: today 'always' on a compound command did nothing and it was asked again."""
    rules = SessionRules()
    intent = _bash(workspace, "grep -n x f && python3 f")
    assert rules.remember(intent, True)
    assert rules.match(_bash(workspace, "grep -n x f && python3 f")) is True
    assert rules.match(_bash(workspace, "grep -rn y src && python3 f")) is True  # grep is a prefix rule
    assert rules.match(_bash(workspace, "grep -n x f && python3 g")) is None  # python3 only exactly
    assert rules.match(_bash(workspace, "python3 f; rm -rf src")) is None


def test_an_interpreter_rule_never_covers_another_command_line(workspace: Path) -> None:
    rules = SessionRules()
    rules.remember(_bash(workspace, "python3 x.py"), True)
    assert rules.match(_bash(workspace, "python3 x.py")) is True
    for other in ("python3 y.py", "python3 x.py --delete", "python3 -c 'import os'", "python3"):
        assert rules.match(_bash(workspace, other)) is None, other


def test_an_allowed_prefix_never_covers_what_it_does_not_name(workspace: Path) -> None:
    rules = SessionRules()
    rules.remember(_bash(workspace, "pytest"), True)
    for command in (
        "pytest; rm -rf src",
        "pytest && curl https://x",
        "pytest | tee log",
        "pytest $(id)",
        "X=1 pytest",
    ):
        assert rules.match(_bash(workspace, command)) is None, command


def test_a_prefix_rule_does_not_reach_the_network_unless_its_words_do(workspace: Path) -> None:
    rules = SessionRules()
    rules.remember(_bash(workspace, "git status"), True)
    rules.add(Rule(tool="bash", spec="git *", allow=True))
    assert rules.match(_bash(workspace, "git log")) is True
    assert rules.match(_bash(workspace, "git push origin main")) is None
    rules.add(Rule(tool="bash", spec="git push *", allow=True))
    assert rules.match(_bash(workspace, "git push origin main")) is True


def test_an_allow_never_reaches_wider_than_the_call_it_answered(workspace: Path) -> None:
    rules = SessionRules()
    rules.remember(_bash(workspace, "pytest"), True)
    assert rules.match(_bash(workspace, "pytest /etc")) is None  # outside
    assert rules.match(_bash(workspace, "pytest .env")) is None  # protected
    rules.remember(_bash(workspace, "pytest /etc"), True)
    assert rules.match(_bash(workspace, "pytest /tmp")) is True


def test_allow_always_for_a_protected_or_outside_path_covers_that_path(workspace: Path) -> None:
    rules = SessionRules()
    rules.remember(_file(workspace, "read", ".env"), True)
    rules.remember(_file(workspace, "read", "/etc/hosts"), True)
    assert rules.match(_file(workspace, "read", ".env")) is True
    assert rules.match(_file(workspace, "read", "/etc/hosts")) is True
    assert rules.match(_file(workspace, "read", "/etc/passwd")) is None


def test_reject_wins_over_allow(workspace: Path) -> None:
    rules = SessionRules()
    rules.remember(_bash(workspace, "git status"), True)
    rules.remember(_bash(workspace, "git status -s"), False)
    assert rules.match(_bash(workspace, "git status")) is False
    rules.remember(_file(workspace, "write", "src/a.py"), False)
    rules.remember(_file(workspace, "write", "src/a.py"), True)
    assert rules.match(_file(workspace, "write", "src/a.py")) is False


def test_a_reject_covers_every_segment_of_a_compound_command(workspace: Path) -> None:
    rules = SessionRules()
    rules.remember(_bash(workspace, "rm -rf build"), False)
    assert rules.match(_bash(workspace, "ls && rm -rf src")) is False
    assert rules.match(_bash(workspace, "FOO=1 rm x")) is False
    assert rules.match(_bash(workspace, "for f in $(ls); do rm $f; done")) is False
    assert rules.match(_bash(workspace, "ls")) is None


def test_tools_without_a_target_are_remembered_by_name_and_urls_by_host(workspace: Path) -> None:
    rules = SessionRules()
    remembered = rules.remember(classify("calculator", {"expression": "1+1"}, workspace), True)
    assert _specs(remembered) == ["calculator"]
    assert rules.match(classify("calculator", {"expression": "2*3"}, workspace)) is True


def test_remembering_twice_keeps_one_rule(workspace: Path) -> None:
    rules = SessionRules()
    rules.remember(_bash(workspace, "pytest"), True)
    rules.remember(_bash(workspace, "pytest -x"), True)
    assert len(rules.rules) == 1


def test_round_trip_through_json(workspace: Path) -> None:
    rules = SessionRules()
    rules.remember(_file(workspace, "write", "src/a.py"), True)
    rules.remember(_bash(workspace, "git commit -m 'ship it'"), True)
    rules.remember(_bash(workspace, "pytest /etc"), True)
    rules.remember(_bash(workspace, "rm -rf build"), False)
    data = rules.to_list()
    text = json.dumps(data)
    assert "ship" not in text
    assert data[0] == {
        "rule": "write(src/a.py)",
        "decision": "allow_always",
        "outside": False,
        "protected": False,
    }
    restored = SessionRules.from_list(json.loads(text))
    assert restored.rules == rules.rules
    for intent in (
        _file(workspace, "write", "src/a.py"),
        _bash(workspace, "git commit --amend"),
        _bash(workspace, "rm x"),
        _bash(workspace, "pytest /tmp"),
    ):
        assert restored.match(intent) == rules.match(intent)


def test_sessions_written_before_the_rule_syntax_still_load(workspace: Path) -> None:
    restored = SessionRules.from_list(
        [
            {"tool": "bash", "pattern": "pytest", "decision": "allow_always"},
            {"tool": "write", "pattern": "src/a.py", "decision": "allow_always"},
            {"tool": "calculator", "pattern": "calculator", "decision": "reject_always"},
            {"tool": "bash", "pattern": "python3", "decision": "allow_always"},  # no longer a rule: dropped
        ]
    )
    assert _specs(restored.rules) == ["bash(pytest *)", "write(src/a.py)", "calculator"]
    assert restored.match(_bash(workspace, "python3 x.py")) is None


@pytest.mark.parametrize(
    "item",
    [
        "pytest",
        {"tool": "bash", "pattern": "pytest"},
        {"tool": "bash", "pattern": "pytest", "decision": "allow_once"},
        {"tool": "", "pattern": "pytest", "decision": "allow_always"},
        {"tool": "bash", "pattern": "", "decision": "reject_always"},
        {"tool": "bash", "pattern": 3, "decision": "reject_always"},
        {"tool": "bash", "pattern": "pytest", "decision": "allow_always", "outside": "yes"},
        {"rule": "bash(python3 *)", "decision": "allow_always"},
    ],
)
def test_from_list_rejects_malformed_items(item: Any) -> None:
    with pytest.raises(SessionError):
        SessionRules.from_list([item])
