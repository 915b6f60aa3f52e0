"""Session rules: allow_always / reject_always per tool and pattern; reject wins; patterns hold no secrets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgent.core.errors import SessionError
from kgent.permissions import Intent, Rule, SessionRules, classify, rule_pattern


def _bash(workspace: Path, command: str) -> Intent:
    return classify("bash", {"command": command}, workspace)


def _file(workspace: Path, tool: str, path: str) -> Intent:
    return classify(tool, {"path": path, "content": "x"}, workspace)


def test_nothing_remembered_means_ask(workspace: Path) -> None:
    assert SessionRules().match(_bash(workspace, "pytest")) is None


def test_allow_always_for_a_write_covers_that_path_only(workspace: Path) -> None:
    rules = SessionRules()
    rule = rules.remember(_file(workspace, "write", "src/a.py"), True)
    assert rule == Rule(tool="write", pattern="src/a.py", allow=True)
    assert rules.match(_file(workspace, "write", "src/a.py")) is True
    assert rules.match(_file(workspace, "write", "./src/a.py")) is True  # same file, other spelling
    assert rules.match(_file(workspace, "write", "src/b.py")) is None
    assert rules.match(_file(workspace, "edit", "src/a.py")) is None  # per tool


def test_allow_always_for_a_command_prefix_covers_its_arguments(workspace: Path) -> None:
    rules = SessionRules()
    assert rules.remember(_bash(workspace, "pytest"), True) is not None
    assert rules.match(_bash(workspace, "pytest -k x")) is True
    assert rules.match(_bash(workspace, "pytest tests/test_a.py -q")) is True
    assert rules.match(_bash(workspace, "pytestx")) is None
    assert rules.match(_bash(workspace, "python -m pytest")) is None


def test_allow_always_with_a_subcommand_covers_only_that_subcommand(workspace: Path) -> None:
    rules = SessionRules()
    rule = rules.remember(_bash(workspace, "git commit -m 'a private message'"), True)
    assert rule is not None and rule.pattern == "git commit"
    assert rules.match(_bash(workspace, "git commit --amend")) is True
    assert rules.match(_bash(workspace, "git push")) is None
    assert rules.match(_bash(workspace, "git")) is None


def test_an_allowed_prefix_never_covers_a_compound_command(workspace: Path) -> None:
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
    assert rules.match(_bash(workspace, "ls")) is None


def test_tools_without_a_target_are_remembered_by_name(workspace: Path) -> None:
    rules = SessionRules()
    assert rules.remember(classify("calculator", {"expression": "1+1"}, workspace), True) == Rule(
        tool="calculator", pattern="calculator", allow=True
    )
    rules.remember(classify("web_fetch", {"url": "https://a"}, workspace), False)
    assert rules.match(classify("web_fetch", {"url": "https://b"}, workspace)) is False
    assert rules.match(classify("calculator", {"expression": "2*3"}, workspace)) is True


@pytest.mark.parametrize(
    "command",
    ["", "   ", "ls && rm x", "API_KEY=sk-live-123 python deploy.py", "echo hi > out.txt", "cat 'x |"],
)
def test_calls_without_a_single_prefix_are_not_remembered(workspace: Path, command: str) -> None:
    rules = SessionRules()
    intent = _bash(workspace, command)
    assert rule_pattern(intent) is None
    assert rules.remember(intent, True) is None
    assert rules.remember(intent, False) is None
    assert rules.rules == ()


def test_malformed_file_calls_are_not_remembered(workspace: Path) -> None:
    assert SessionRules().remember(classify("write", {"content": "x"}, workspace), True) is None
    assert SessionRules().remember(classify("bash", {}, workspace), True) is None


@pytest.mark.parametrize(
    ("command", "pattern"),
    [
        ("pytest -k x", "pytest"),
        ("git status", "git status"),
        ("npm run build --prod", "npm run"),
        ("curl -H 'Authorization: Bearer abc' https://api.example.com/?token=s3cr3t", "curl"),
        ("mysql -psecret db", "mysql"),
        ("python script.py --password hunter2", "python"),
        ("./deploy.sh sk-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "./deploy.sh"),
    ],
)
def test_bash_patterns_keep_at_most_the_first_two_words(workspace: Path, command: str, pattern: str) -> None:
    assert rule_pattern(_bash(workspace, command)) == pattern


def test_remembering_twice_keeps_one_rule(workspace: Path) -> None:
    rules = SessionRules()
    rules.remember(_bash(workspace, "pytest"), True)
    rules.remember(_bash(workspace, "pytest -x"), True)
    assert len(rules.rules) == 1


def test_round_trip_through_json(workspace: Path) -> None:
    rules = SessionRules()
    rules.remember(_file(workspace, "write", "src/a.py"), True)
    rules.remember(_bash(workspace, "git commit -m 'ship it with token s3cr3t'"), True)
    rules.remember(_bash(workspace, "pytest /etc"), True)
    rules.remember(_bash(workspace, "rm -rf build"), False)
    data = rules.to_list()
    text = json.dumps(data)
    assert "s3cr3t" not in text and "ship" not in text and "build" not in text
    assert data[0] == {
        "tool": "write",
        "pattern": "src/a.py",
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


def test_from_list_defaults_the_flags() -> None:
    restored = SessionRules.from_list([{"tool": "bash", "pattern": "pytest", "decision": "allow_always"}])
    assert restored.rules == (Rule(tool="bash", pattern="pytest", allow=True),)


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
    ],
)
def test_from_list_rejects_malformed_items(item: Any) -> None:
    with pytest.raises(SessionError):
        SessionRules.from_list([item])
