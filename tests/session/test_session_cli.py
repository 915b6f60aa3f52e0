"""`kgent sessions` and `kgent run --session/--fork`, in process (argv in, stdout out), on the real state dir layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgent.cli.main import main
from kgent.session.jsonl import JsonlSessionStore
from kgent.session.paths import sessions_root


def kgent(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


def run_args(workspace: Path, script: str, *extra: str) -> list[str]:
    return ["run", "--provider", "scripted", "--model", script, "--mode", "full", "--workspace", str(workspace),
            "--json", *extra]


def session_id(output: str) -> str:
    return json.loads(output.strip().splitlines()[-1])["result"]["sessionId"]


def test_run_resume_fork_list_show_label(capsys, workspace) -> None:
    code, out = kgent(capsys, *run_args(workspace, "hello", "first question"))
    assert code == 0
    sid = session_id(out)
    code, out = kgent(capsys, *run_args(workspace, "hello", "--session", sid, "second question"))
    assert code == 0 and session_id(out) == sid

    code, out = kgent(capsys, "sessions", "--workspace", str(workspace))
    assert code == 0 and sid in out and "first question" in out and "5" in out.split(sid)[1].split()[2]

    code, out = kgent(capsys, "sessions", "--workspace", str(workspace), "--json")
    [info] = json.loads(out)
    assert (info["sessionId"], info["title"], info["entryCount"]) == (sid, "first question", 5)

    code, out = kgent(capsys, "sessions", "show", sid, "--json")
    tree = json.loads(out)
    first_answer = [e for e in tree["entries"] if e["type"] == "message"][1]
    assert first_answer["message"]["role"] == "assistant"
    assert tree["usage"]["outputTokens"] == 2 * first_answer["message"]["usage"]["outputTokens"]  # both runs

    code, out = kgent(capsys, *run_args(workspace, "hello", "--session", sid, "--fork", first_answer["id"], "third"))
    assert code == 0
    code, out = kgent(capsys, "sessions", "label", sid, first_answer["id"], "branch point")
    assert code == 0
    code, out = kgent(capsys, "sessions", "show", sid)
    assert code == 0
    lines = out.splitlines()
    assert any(first_answer["id"] in line and "[branch point]" in line and line.startswith("*") for line in lines)
    second = next(line for line in lines if "second question" in line)
    third = next(line for line in lines if "user: third" in line)
    assert second.startswith(" ") and third.startswith("*")  # the old branch is shown, not active
    assert lines[-1].rstrip().endswith("<- leaf")
    assert lines[2].startswith("tokens: ") and "cost unknown" in lines[2]  # all three runs, on a scripted model


def test_fork_command_moves_the_leaf_durably(capsys, workspace) -> None:
    code, out = kgent(capsys, *run_args(workspace, "hello", "q"))
    sid = session_id(out)
    import asyncio

    tree = asyncio.run(JsonlSessionStore(sessions_root()).load(sid))
    user = [e for e in tree.branch() if e.type == "message"][0]
    assert kgent(capsys, "sessions", "fork", sid, user.id)[0] == 0
    assert asyncio.run(JsonlSessionStore(sessions_root()).load(sid)).leaf_id == user.id
    code, out = kgent(capsys, "sessions", "fork", sid, "nope")
    assert code == 2 and "no entry" in out


def test_compact_from_the_cli(capsys, workspace) -> None:
    (workspace / "sample.py").write_text("value = 1\nprint(value)\n")
    code, out = kgent(capsys, *run_args(workspace, "tool-loop", "fix it"))
    sid = session_id(out)
    code, out = kgent(capsys, "sessions", "compact", sid)
    assert code == 0 and "nothing to compact" in out
    code, out = kgent(capsys, "sessions", "compact", sid, "--keep", "20", "--json")
    assert code == 0
    entry = json.loads(out)["entry"]
    assert entry["type"] == "compaction" and entry["readFiles"] == ["sample.py"]
    code, out = kgent(capsys, "sessions", "show", sid)
    assert "checkpoint:" in out.splitlines()[-1]
    code, out = kgent(capsys, *run_args(workspace, "hello", "--session", sid, "and now?"))
    assert code == 0  # a compacted session resumes


def test_unknown_session_and_empty_workspace(capsys, workspace) -> None:
    code, out = kgent(capsys, "sessions", "show", "nosuch")
    assert code == 2 and "no session" in out
    code, out = kgent(capsys, "sessions", "--workspace", str(workspace))
    assert code == 0 and "no sessions" in out
