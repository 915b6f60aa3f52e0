"""Instructions over the wire (the daemon as a subprocess): the `instructions` events of a run, and what
`agent/session` says the context holds, after an edit of AGENTS.md and a resume too."""

from __future__ import annotations

from pathlib import Path
from typing import Any


async def test_instructions_events_and_the_session_fields(spawn: Any, tmp_path: Path) -> None:
    config = tmp_path / "config"
    (config / "skills" / "lint").mkdir(parents=True)
    (config / "skills" / "lint" / "SKILL.md").write_text(
        "---\nname: lint\ndescription: Lint the project.\n---\n"
    )
    (config / "AGENTS.md").write_text("USER: be brief\n")
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("ROOT: run the tests\n")
    (ws / "src" / "AGENTS.md").write_text("SRC: pure functions\n")
    (ws / "src" / "app.py").write_text("def f(x: int) -> int:\n    return x\n")
    ws = ws.resolve()
    host = await spawn(state_dir=str(tmp_path / "state"), KGENT_CONFIG_DIR=str(config))
    _, end, events = await host.run_to_end(prompt="check app", workspace=str(ws), model="nested-instructions")
    assert end["status"] == "settled"
    loaded = [e for e in events if e["type"] == "instructions"]
    assert [[(f["path"], f["source"], f["change"]) for f in e["files"]] for e in loaded] == [
        [(str(config / "AGENTS.md"), "user", "new"), (str(ws / "AGENTS.md"), "project", "new")],
        [(str(ws / "src" / "AGENTS.md"), "directory", "new")],
    ]
    types = [e["type"] for e in events]
    assert types.index("instructions") < types.index("user_message")  # loaded before the prompt
    session = await host.call("agent/session", {"sessionId": end["sessionId"]})
    assert [(f["path"], f["source"]) for f in session["instructions"]] == [
        (str(config / "AGENTS.md"), "user"),
        (str(ws / "AGENTS.md"), "project"),
        (str(ws / "src" / "AGENTS.md"), "directory"),
    ]
    assert session["skills"] == [
        {
            "name": "lint",
            "description": "Lint the project.",
            "path": str(config / "skills" / "lint" / "SKILL.md"),
        }
    ]
    recorded = [e for e in session["entries"] if e["type"] == "instructions"]
    assert "SRC: pure functions" in recorded[-1]["files"][0]["text"]

    (ws / "src" / "AGENTS.md").write_text("SRC: pure functions, and typed\n")
    _, end2, events2 = await host.run_to_end(
        prompt="again", workspace=str(ws), model="hello", sessionId=end["sessionId"]
    )
    [changed] = [e for e in events2 if e["type"] == "instructions"]
    assert [(f["path"], f["change"]) for f in changed["files"]] == [
        (str(ws / "src" / "AGENTS.md"), "changed")
    ]
    session = await host.call("agent/session", {"sessionId": end["sessionId"]})
    assert [f["change"] for f in session["instructions"]] == ["new", "new", "changed"]
