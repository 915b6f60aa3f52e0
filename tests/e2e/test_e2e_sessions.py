"""Sessions over the wire: list, read, resume, fork (agent/fork and parentEntryId), compact, rename, delete, and
their refusals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from kgent_host import KgentHost
from pygls.exceptions import JsonRpcException

from kgent.context.summary import SECTIONS


def messages(session: dict[str, Any], role: str, *, branch_only: bool = True) -> list[dict[str, Any]]:
    on = set(session["branch"])
    return [
        e
        for e in session["entries"]
        if e["type"] == "message" and e["message"]["role"] == role and (not branch_only or e["id"] in on)
    ]


async def test_resume_and_fork(host: KgentHost, workspace: Path) -> None:
    _, first, _ = await host.run_to_end(prompt="First question", workspace=str(workspace))
    sid = first["sessionId"]
    # Resume: the workspace comes from the session; the history grows on the same branch.
    run2, second, _ = await host.run_to_end(prompt="Second question", sessionId=sid, model="streamed-run")
    assert second["sessionId"] == sid and host.of(run2)[0]["sessionId"] == sid
    session = await host.call("agent/session", {"sessionId": sid})
    assert session["sessionId"] == sid and session["workspace"] == str(workspace)
    assert session["leafId"] == session["branch"][-1] and session["liveRunId"] is None
    assert [m["message"]["text"] for m in messages(session, "user")] == ["First question", "Second question"]
    ids = [e["id"] for e in session["entries"]]
    assert all(e["parentId"] is None or e["parentId"] in ids for e in session["entries"])

    # Fork at the end of the first exchange: the next run continues from there, the old branch stays.
    first_answer = messages(session, "assistant")[0]["id"]
    assert await host.call("agent/fork", {"sessionId": sid, "entryId": first_answer}) == {
        "sessionId": sid,
        "leafId": first_answer,
    }
    forked = await host.call("agent/session", {"sessionId": sid})
    assert forked["leafId"] == first_answer and forked["branch"][-1] == first_answer
    await host.run_to_end(prompt="Third question", sessionId=sid)
    tree = await host.call("agent/session", {"sessionId": sid})
    assert [m["message"]["text"] for m in messages(tree, "user")] == ["First question", "Third question"]

    # the prompts that branch off the first answer (a resume that changed the model records a config entry first)
    def prompts_after(entry_id: str) -> list[str]:
        out = []
        for e in tree["entries"]:
            if e["parentId"] == entry_id:
                out += [e["message"]["text"]] if e["type"] == "message" else prompts_after(e["id"])
        return out

    assert sorted(prompts_after(first_answer)) == ["Second question", "Third question"]
    configs = [e for e in tree["entries"] if e["type"] == "config"]
    assert [c["model"] for c in configs] == [
        "hello",
        "streamed-run",
    ]  # the fork runs on the first branch's config
    assert len(tree["entries"]) > len(session["entries"])  # nothing was deleted
    # branchOnly returns just the active branch.
    only = await host.call("agent/session", {"sessionId": sid, "branchOnly": True})
    assert [e["id"] for e in only["entries"]] == only["branch"] == tree["branch"]

    # A one-off fork with parentEntryId, and the session list.
    await host.run_to_end(prompt="Fourth question", sessionId=sid, parentEntryId=first_answer)
    tree2 = await host.call("agent/session", {"sessionId": sid})
    assert len([e for e in tree2["entries"] if e["parentId"] == first_answer]) == 3
    listed = await host.call("agent/sessions", {"workspace": str(workspace)})
    (info,) = [s for s in listed["sessions"] if s["sessionId"] == sid]
    assert info["title"] == "First question" and info["liveRunId"] is None
    assert info["entryCount"] == len(tree2["entries"]) and info["leafId"] == tree2["leafId"]


async def test_session_refusals(host: KgentHost, workspace: Path, tmp_path: Path) -> None:
    async def error(method: str, params: dict[str, Any]) -> tuple[int, str]:
        with pytest.raises(JsonRpcException) as e:
            await host.call(method, params)
        return e.value.code, (e.value.data or {}).get("code")

    assert await error("agent/session", {"sessionId": "nosuchsession"}) == (-32002, "session_not_found")
    assert await error("agent/run", {"prompt": "x", "sessionId": "nosuchsession"}) == (
        -32002,
        "session_not_found",
    )
    assert await error("agent/session", {"sessionId": "../../etc"}) == (-32602, "invalid_session_id")
    _, end, _ = await host.run_to_end(prompt="Hello", workspace=str(workspace))
    sid = end["sessionId"]
    assert await error("agent/fork", {"sessionId": sid, "entryId": "nope"}) == (-32002, "entry_not_found")
    assert await error("agent/run", {"prompt": "x", "sessionId": sid, "parentEntryId": "nope"}) == (
        -32002,
        "entry_not_found",
    )
    other = tmp_path / "other"
    other.mkdir()
    assert await error("agent/run", {"prompt": "x", "sessionId": sid, "workspace": str(other)}) == (
        -32001,
        "config_error",
    )
    run_id, _ = await host.start_run(prompt="slow", sessionId=sid, model="slow-answer")
    entry = (await host.call("agent/session", {"sessionId": sid}))["branch"][0]
    assert await error("agent/fork", {"sessionId": sid, "entryId": entry}) == (-32003, "session_busy")
    assert await error("agent/compact", {"sessionId": sid}) == (-32003, "session_busy")
    listed = await host.call("agent/sessions", {"workspace": str(workspace)})
    assert [s["liveRunId"] for s in listed["sessions"] if s["sessionId"] == sid] == [run_id]
    await host.wait_end(run_id)


async def test_compact(host: KgentHost, workspace: Path, tmp_path: Path) -> None:
    _, end, _ = await host.run_to_end(prompt="Hi", workspace=str(workspace))
    sid = end["sessionId"]
    # Too little history: nothing to compact.
    assert await host.call("agent/compact", {"sessionId": sid}) == {
        "compacted": False,
        "entryId": None,
        "tokensBefore": None,
        "tokensAfter": None,
    }
    # A long answer, then a short exchange: the long part can be summarised (the scripted provider answers
    # summary requests with a well-formed summary).
    big = tmp_path / "big.json"
    big.write_text(json.dumps([[{"text": "lorem ipsum dolor sit amet " * 2000, "chunks": 4}]]))
    await host.run_to_end(prompt="Write a lot", sessionId=sid, model=str(big))
    await host.run_to_end(prompt="Short one", sessionId=sid)
    before = await host.call("agent/session", {"sessionId": sid})
    result = await host.call("agent/compact", {"sessionId": sid, "instructions": "keep the file names"})
    assert result["compacted"] is True and result["tokensAfter"] < result["tokensBefore"]
    after = await host.call("agent/session", {"sessionId": sid})
    assert after["leafId"] == result["entryId"] and len(after["entries"]) == len(before["entries"]) + 1
    checkpoint = next(e for e in after["entries"] if e["id"] == result["entryId"])
    assert checkpoint["type"] == "compaction" and checkpoint["summary"].startswith(f"## {SECTIONS[0]}")
    # The session goes on from the checkpoint.
    run_id, end, _ = await host.run_to_end(prompt="And now?", sessionId=sid)
    assert end["status"] == "settled"


async def test_a_long_scripted_run_compacts_automatically(
    host: KgentHost, workspace: Path, tmp_path: Path
) -> None:
    """The scripted models have a 32k-token window: a run that keeps reading a ~7k-token file outgrows it, compacts
    on its own (compaction events in the stream, checkpoints on the branch) and still settles."""
    (workspace / "notes.txt").write_text("".join(f"line {i}: {'lorem ipsum ' * 20}\n" for i in range(110)))
    script = tmp_path / "reads.json"
    turns = [
        [{"text": f"Reading, pass {i}."}, {"tool": "read", "args": {"path": "notes.txt"}}] for i in range(6)
    ]
    script.write_text(json.dumps([*turns, [{"text": "Read it six times."}]]))
    run_id, end, events = await host.run_to_end(
        prompt="Read the notes six times", workspace=str(workspace), model=str(script), mode="full"
    )
    assert end["status"] == "settled" and end["text"] == "Read it six times."
    compactions = [e for e in events if e["type"] == "compaction"]
    completed = [e for e in compactions if e["status"] == "completed"]
    assert completed and all(e["trigger"] == "automatic" for e in compactions)
    assert all(e["tokensAfter"] < e["tokensBefore"] for e in completed)
    session = await host.call("agent/session", {"sessionId": end["sessionId"], "branchOnly": True})
    checkpoints = [e for e in session["entries"] if e["type"] == "compaction"]
    assert [c["id"] for c in checkpoints] == [e["entryId"] for e in completed]
    assert checkpoints[0]["readFiles"] == ["notes.txt"] and checkpoints[0]["summary"].startswith(
        f"## {SECTIONS[0]}"
    )
    assert len(messages(session, "tool")) == 6  # the full history stays in the session


async def test_a_new_session_can_be_read_as_soon_as_agent_run_answers(
    host: KgentHost, workspace: Path
) -> None:
    """The run writes its new session just after the answer; a client asking for it at once must not be told it does
    not exist."""
    for i in range(8):
        run_id, sid = await host.start_run(prompt=f"Hello {i}", workspace=str(workspace))
        session, listed = await asyncio.gather(
            host.call("agent/session", {"sessionId": sid}),
            host.call("agent/sessions", {"workspace": str(workspace)}),
        )
        assert session["sessionId"] == sid and session["entries"][0]["type"] == "config"
        assert sid in [s["sessionId"] for s in listed["sessions"]]
        await host.wait_end(run_id)


async def test_rename_survives_a_restart_and_delete_refuses_a_live_run(
    spawn: Any, workspace: Path, tmp_path: Path
) -> None:
    async def error(h: KgentHost, method: str, params: dict[str, Any]) -> tuple[int, str]:
        with pytest.raises(JsonRpcException) as e:
            await h.call(method, params)
        return e.value.code, (e.value.data or {}).get("code")

    async def titles(h: KgentHost) -> dict[str, str]:
        listed = await h.call("agent/sessions", {"workspace": str(workspace)})
        return {s["sessionId"]: s["title"] for s in listed["sessions"]}

    state = str(tmp_path / "state")
    first = await spawn(state_dir=state)
    _, end, _ = await first.run_to_end(prompt="Port the parser", workspace=str(workspace))
    sid = end["sessionId"]
    assert await first.call("agent/renameSession", {"sessionId": sid, "title": "Parser port"}) == {}
    assert await error(first, "agent/renameSession", {"sessionId": sid, "title": "x" * 201}) == (
        -32602,
        "invalid_params",
    )
    await first.call("shutdown")
    assert await first.exit() == 0  # a restart: a new daemon on the same state directory

    second = await spawn(state_dir=state)
    assert await titles(second) == {sid: "Parser port"}
    assert (await second.call("agent/session", {"sessionId": sid}))["title"] == "Parser port"
    run_id, _ = await second.start_run(prompt="slow", sessionId=sid, model="slow-answer")
    assert await error(second, "agent/deleteSession", {"sessionId": sid}) == (-32003, "session_busy")
    assert await error(second, "agent/renameSession", {"sessionId": sid, "title": "x"}) == (
        -32003,
        "session_busy",
    )
    await second.wait_end(run_id)
    assert await second.call("agent/deleteSession", {"sessionId": sid}) == {}
    assert await titles(second) == {}
    assert await error(second, "agent/session", {"sessionId": sid}) == (-32002, "session_not_found")
    assert await error(second, "agent/deleteSession", {"sessionId": sid}) == (-32002, "session_not_found")
    assert not list((tmp_path / "state").rglob(f"{sid}.jsonl"))
