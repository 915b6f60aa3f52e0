"""Slash commands over the stdio daemon (a subprocess over real pipes): `agent/commands` lists the built-ins and the
project's and user's templates; `agent/run` expands `/name args` (the events carry the expansion, the session keeps
what was typed); an unknown name is `-32602` with close names; `/compact` streams as a run of its own; `agent/command`
answers /help, /cost, /mode and /model and says what a client does with /clear and /rewind; `agent/exportSession`
gives the transcript."""

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
    assert [(e["name"], e["description"], e["action"]) for e in answer["menu"]][9:] == [
        ("explain", "Explain a file (project)", "prompt")
    ]
    builtins = ["clear", "compact", "cost", "help", "init", "mode", "model", "review", "rewind"]
    assert [(c["name"], c["source"], c.get("shadowed", False)) for c in listed] == [
        *[(name, "builtin", False) for name in builtins],
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


async def test_the_daemon_answers_commands_and_exports(spawn: Spawn, workspace: Path) -> None:
    host = await spawn()
    helped = await host.call("agent/command", {"text": "/help", "workspace": str(workspace)})
    assert helped["action"] == "answer" and "/cost — Show the tokens" in helped["text"]
    _, end, _ = await host.run_to_end(prompt="Hello there", workspace=str(workspace))
    sid = end["sessionId"]
    cost = await host.call("agent/command", {"text": "/cost", "sessionId": sid})
    assert cost["text"].startswith("This session so far: ") and " out tokens" in cost["text"]
    planned = await host.call("agent/command", {"text": "/mode plan", "sessionId": sid})
    assert planned["mode"] == "plan" and planned["text"].startswith("Mode for this session's next runs: plan")
    _, _, events = await host.run_to_end(prompt="Again", sessionId=sid)
    assert events[0]["type"] == "run_start" and events[0]["mode"] == "plan"  # the session's next run
    cleared = await host.call("agent/command", {"text": "/clear", "sessionId": sid})
    assert cleared["action"] == "newSession"
    with pytest.raises(JsonRpcException) as refused:
        await host.call("agent/run", {"prompt": "/cost", "sessionId": sid})
    assert refused.value.code == -32602 and refused.value.data == {
        "code": "not_a_prompt",
        "command": "cost",
        "action": "answer",
    }
    md = await host.call("agent/exportSession", {"sessionId": sid})
    assert (md["mimeType"], md["filename"]) == ("text/markdown", f"kgent-{sid}.md")
    assert "## You\n\nHello there" in md["text"] and "## You\n\nAgain" in md["text"]
    page = await host.call("agent/exportSession", {"sessionId": sid, "format": "html"})
    assert page["mimeType"] == "text/html" and "<script" not in page["text"] and "Hello there" in page["text"]
    with pytest.raises(JsonRpcException) as missing:
        await host.call("agent/exportSession", {"sessionId": "nope12345678"})
    assert missing.value.code == -32002
