"""`kgent run`'s approval prompt: one line per option offered, named with the rule it creates, and why no 'always'
is offered when the request says `noRule`."""

from __future__ import annotations

from pathlib import Path

from kgent.cli.terminal import prompt_lines
from kgent.core.events import PermissionRequest, PermissionToolCall
from kgent.permissions import card, classify


def _request(workspace: Path, command: str) -> PermissionRequest:
    options, no_rule = card(classify("bash", {"command": command}, workspace), project_trusted=True)
    call = PermissionToolCall(
        tool_call_id="c", name="bash", kind="execute", title=command, args={}, command=command
    )
    return PermissionRequest(
        request_id="r",
        tool_call=call,
        risk="high",
        reason="runs a shell command",
        operation="shell",
        scope="workspace",
        options=options,
        no_rule=no_rule,
    )


def test_each_option_is_a_line_with_its_rule_words(tmp_path: Path) -> None:
    lines, keys = prompt_lines(_request(tmp_path, "npm test -- -w"))
    assert lines == [
        "  [y] Allow once",
        "  [a] Allow `npm test …` this session",
        "  [p] Always allow `npm test …` in this project",
        "  [n] Reject",
        "  [r] Reject `npm test …` this session",
        "  [x] Always reject `npm test …` in this project",
    ]
    assert keys["p"] == "allow_always_project"


def test_no_rule_is_said_and_only_once_options_are_keys(tmp_path: Path) -> None:
    lines, keys = prompt_lines(_request(tmp_path, "for i in $(seq 3); do echo $i; done"))
    assert lines[:2] == ["  [y] Allow once", "  [n] Reject"]
    assert lines[2].startswith("  (no 'always': The command has a substitution")
    assert keys == {"y": "allow_once", "n": "reject_once"}
