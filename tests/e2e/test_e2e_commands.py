"""Slash commands over the stdio daemon (a subprocess over real pipes): `agent/commands` lists the built-ins and the
project's and user's templates; `agent/run` expands `/name args` (the events carry the expansion, the session keeps
what was typed); an unknown name is `-32602` with close names; `/compact` streams as a run of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from conftest import Spawn


async def test_commands_listed_expanded_and_refused(spawn: Spawn, workspace: Path, tmp_path: Path) -> None:
    (workspace / ".kgent" / "prompts").mkdir(parents=True)
    (workspace / ".kgent" / "prompts" / "explain.md").write_text(
        "---\ndescription: Explain a file\nargument-hint: <path>\n---\nExplain $1 please.\n"
    )
    (tmp_path / "config" / "prompts").mkdir(parents=True)
    (tmp_path / "config" / "prompts" / "explain.md").write_text("the user's explain\n")
    host = await spawn(KGENT_CONFIG_DIR=str(tmp_path / "config"))
    answer = await host.call("agent/commands", {"workspace": str(workspace)})
    listed = answer["commands"]
    assert [(e["name"], e["description"]) for e in answer["menu"]][3:] == [
        ("explain", "Explain a file (project)")
    ]
    assert [(c["name"], c["source"], c.get("shadowed", False)) for c in listed] == [
        ("compact", "builtin", False),
        ("init", "builtin", False),
        ("review", "builtin", False),
        ("explain", "project", False),
        ("explain", "user", True),
    ]
    run_id, end, events = await host.run_to_end(prompt="/explain sample.py", workspace=str(workspace))
    assert end["status"] == "settled"
    [user] = [e for e in events if e["type"] == "user_message"]
    assert user["text"] == "Explain sample.py please.\n"
    session = await host.call("agent/session", {"sessionId": end["sessionId"]})
    [typed] = [e for e in session["entries"] if e.get("typed")]
    assert typed["typed"] == "/explain sample.py" and typed["id"] == user["entryId"]

    with pytest.raises(JsonRpcException) as unknown:
        await host.call("agent/run", {"prompt": "/explian x", "workspace": str(workspace)})
    assert unknown.value.code == -32602 and unknown.value.data == {
        "code": "unknown_command",
        "command": "explian",
        "suggestions": ["explain"],
    }

    _, compacted, events = await host.run_to_end(prompt="/compact", sessionId=end["sessionId"])
    assert [e["type"] for e in events] == [
        "run_start",
        "compaction",
        "compaction",
        "message_delta",
        "run_end",
    ]
    assert [e["status"] for e in events if e["type"] == "compaction"] == ["started", "completed"]
    assert compacted["status"] == "settled" and compacted["text"] == "Nothing to compact yet."
