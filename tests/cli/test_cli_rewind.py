"""`kgent sessions rewind` and `kgent demo rewind` as a user meets them: subprocesses, real files in a git work tree,
the scripted provider. The plan is printed and asked about; no answer, nothing changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

A, B, C = "alpha\nbeta\ngamma\n", "alpha\nbravo\ncharlie\n", "charlie\ndelta\necho\n"


def kgent(*args: str, cwd: Path, state: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and "API_KEY" not in k}
    env.update({"KGENT_STATE_DIR": str(state), "KGENT_CONFIG_DIR": str(state / "config"), "COLUMNS": "200"})
    return subprocess.run(
        [sys.executable, "-m", "kgent", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_sessions_rewind_prints_the_plan_asks_and_restores_all_but_the_conflict(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    for name, text in (("a.txt", A), ("b.txt", B), ("c.txt", C)):
        (ws / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    run = (
        "run",
        "--provider",
        "scripted",
        "--model",
        "rewind-edits",
        "--mode",
        "full",
        "--json",
        "change them",
    )
    out = kgent(*run, cwd=ws, state=state)
    assert out.returncode == 0, out.stderr
    sid = json.loads(out.stdout.splitlines()[-1])["result"]["sessionId"]
    (ws / "b.txt").write_text("alpha\nbravo\nCHARLIE\nmine\n")
    tree = json.loads(kgent("sessions", "show", sid, "--json", cwd=ws, state=state).stdout)
    entry = next(
        e["id"] for e in tree["entries"] if e["type"] == "message" and e["message"]["role"] == "user"
    )

    dry = kgent("sessions", "rewind", sid, entry, "--dry-run", "--json", cwd=ws, state=state)
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert {f["path"]: f["outcome"] for f in plan["files"]} == {
        "a.txt": "restored",
        "b.txt": "conflict",
        "c.txt": "restored",
        "new.txt": "restored",
    }
    assert plan["forked"] is False and (ws / "new.txt").exists()

    refused = kgent("sessions", "rewind", sid, entry, cwd=ws, state=state, stdin="n\n")
    assert refused.returncode == 1 and "nothing changed" in refused.stdout
    assert "left as it is   b.txt" in refused.stdout and "restore         c.txt" in refused.stdout
    assert "[y/N]" in refused.stdout and (ws / "a.txt").read_text() == A.replace("beta", "BETA")

    done = kgent("sessions", "rewind", sid, entry, cwd=ws, state=state, stdin="y\n")
    assert done.returncode == 0, done.stderr
    assert "restored        a.txt" in done.stdout and "active leaf is now" in done.stdout
    assert (ws / "a.txt").read_text() == A and (ws / "c.txt").read_text() == C
    assert not (ws / "new.txt").exists() and (ws / "b.txt").read_text() == "alpha\nbravo\nCHARLIE\nmine\n"
    after = json.loads(kgent("sessions", "show", sid, "--json", cwd=ws, state=state).stdout)
    assert after["leafId"] == next(e["parentId"] for e in after["entries"] if e["id"] == entry)

    wrong = kgent("sessions", "rewind", sid, "nope", "--yes", cwd=ws, state=state)
    assert wrong.returncode == 2 and "no entry 'nope'" in wrong.stderr


def test_outside_git_the_plan_names_the_shell_command_before_asking(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    for name, text in (("a.txt", A), ("b.txt", B), ("c.txt", C)):
        (ws / name).write_text(text)
    run = (
        "run",
        "--provider",
        "scripted",
        "--model",
        "rewind-edits",
        "--mode",
        "full",
        "--json",
        "change them",
    )
    sid = json.loads(kgent(*run, cwd=ws, state=state).stdout.splitlines()[-1])["result"]["sessionId"]
    tree = json.loads(kgent("sessions", "show", sid, "--json", cwd=ws, state=state).stdout)
    entry = next(
        e["id"] for e in tree["entries"] if e["type"] == "message" and e["message"]["role"] == "user"
    )
    asked = kgent("sessions", "rewind", sid, entry, cwd=ws, state=state)  # no answer (end of input): no
    assert asked.returncode == 1
    before_question = asked.stdout.split("[y/N]")[0]
    assert "note: The run of 'change them' ran shell commands outside a git work tree" in before_question
    assert "`sed -i 's/^delta$/DELTA/' c.txt`" in before_question
    done = kgent("sessions", "rewind", sid, entry, "--yes", cwd=ws, state=state)
    assert done.returncode == 0 and (ws / "a.txt").read_text() == A
    assert (ws / "c.txt").read_text() == C.replace("delta", "DELTA")  # not known, not restored


def test_demo_rewind_restores_the_files_and_reports_the_conflict(tmp_path: Path) -> None:
    out = kgent("demo", "rewind", cwd=tmp_path, state=tmp_path / "state")
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    order = ["a git work tree", "sed -i", "the person edits b.txt", "dry run", "left as it is", "b.txt kept"]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions), text
