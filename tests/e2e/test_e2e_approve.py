"""Approve with changes and no futile approvals, end to end over the daemon's stdio: the user's version of an edit is
written (to disk, or into the host's buffer), the model is told what the user changed, the review holds the written
text; a newText the request may not take is refused with -32602 and the prompt stays open; an edit that cannot apply
is never put to the host."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kgent_host import STATE_DIR, KgentHost, daemon_env
from raw_daemon import RawDaemon, assert_clean_error

SAMPLE = "value = 1\nprint(value)\n"
MINE = "value = 3  # the user's\nprint(value)\n"
FS = {"fs": {"readTextFile": True, "writeTextFile": True, "saveFiles": True}}


def script(tmp_path: Path, *calls: dict[str, Any]) -> str:
    """A scripted model that makes these tool calls, one per turn, then answers."""
    turns = [[{"tool": c["tool"], "args": c["args"]}] for c in calls] + [[{"text": "Done."}]]
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


EDIT = {"tool": "edit", "args": {"path": "sample.py", "oldText": "value = 1", "newText": "value = 2"}}


def allow_with(text: str) -> Any:
    return lambda params: {"outcome": "selected", "optionId": "allow_once", "newText": text}


def tool_updates(h: KgentHost, run_id: str) -> list[dict[str, Any]]:
    return [e for e in h.of(run_id, "tool_update") if e["status"] in ("completed", "failed")]


async def test_edit_approved_with_changes_writes_the_users_version(
    host: KgentHost, workspace: Path, tmp_path: Path
) -> None:
    caps = (await host.initialize())["capabilities"]
    assert caps["permissionNewText"] is True
    host.policy = allow_with(MINE)
    run_id, end, _ = await host.run_to_end(
        prompt="Set value to 2", workspace=str(workspace), model=script(tmp_path, EDIT), mode="ask"
    )
    assert end["status"] == "settled"
    assert (workspace / "sample.py").read_text() == MINE
    [asked] = host.permission_requests
    assert asked["toolCall"]["newText"] == "value = 2\nprint(value)\n"
    [resolved] = host.of(run_id, "permission_resolved")
    assert resolved["edited"] is True and resolved["approved"] is True
    [done] = tool_updates(host, run_id)
    assert done["status"] == "completed" and done["details"]["userEdited"] is True
    out = done["output"]
    assert "The user changed your proposed change to sample.py" in out and "Keep their changes" in out
    assert "-value = 2\n+value = 3  # the user's\n" in out  # from the proposal to what was written
    assert "-value = 1\n+value = 3  # the user's\n" in done["diff"]  # the file's change
    assert end["changedPaths"] == ["sample.py"]
    # the session records that the user edited it, never the text; the review holds the written text
    session = await host.call("agent/session", {"sessionId": end["sessionId"]})
    [entry] = [e for e in session["entries"] if e["type"] == "permission"]
    assert entry["edited"] is True and "value = 3" not in json.dumps(entry)
    review = await host.call("agent/review", {"runId": run_id})
    hunks = [h for r in review["runs"] for f in r["files"] for h in f["hunks"]]
    assert [h["newText"] for h in hunks] == ["value = 3  # the user's\n"]


async def test_users_version_of_a_write_goes_into_the_hosts_buffer(
    spawn: Any, workspace: Path, tmp_path: Path
) -> None:
    h: KgentHost = await spawn(initialize=False)
    await h.initialize(capabilities=FS)
    target = str(workspace / "sample.py")
    buffers = {target: "value = 1  # unsaved\nprint(value)\n"}

    def files(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "agent/readTextFile":
            return {"content": buffers.get(params["path"])}
        if method == "agent/writeTextFile":
            buffers[params["path"]] = params["content"]
            return {"applied": True}
        return {"saved": []}

    h.files = files
    h.policy = allow_with(MINE)
    write = {"tool": "write", "args": {"path": "sample.py", "content": "value = 2\n"}}
    run_id, end, _ = await h.run_to_end(
        prompt="rewrite", workspace=str(workspace), model=script(tmp_path, write), mode="ask"
    )
    assert end["status"] == "settled"
    [asked] = h.permission_requests
    assert asked["toolCall"]["oldText"] == "value = 1  # unsaved\nprint(value)\n"  # the buffer, not the disk
    assert buffers[target] == MINE  # written through the host, as a normal edit
    assert (workspace / "sample.py").read_text() == SAMPLE  # the disk is the host's business
    [done] = tool_updates(h, run_id)
    assert "-value = 2\n+value = 3  # the user's\n+print(value)\n" in done["output"]


async def test_conflict_when_the_file_changed_before_the_answer(
    host: KgentHost, workspace: Path, tmp_path: Path
) -> None:
    def change_then_answer(params: dict[str, Any]) -> dict[str, Any]:
        (workspace / "sample.py").write_text("value = 1\nprint('changed meanwhile')\n")
        return {"outcome": "selected", "optionId": "allow_once", "newText": MINE}

    host.policy = change_then_answer
    run_id, end, _ = await host.run_to_end(
        prompt="Set value to 2", workspace=str(workspace), model=script(tmp_path, EDIT), mode="ask"
    )
    assert end["status"] == "settled"
    [done] = tool_updates(host, run_id)
    assert done["status"] == "failed" and done["output"].startswith("conflict: sample.py changed")
    assert (workspace / "sample.py").read_text() == "value = 1\nprint('changed meanwhile')\n"


async def test_futile_edits_fail_without_asking(host: KgentHost, workspace: Path, tmp_path: Path) -> None:
    (workspace / "twice.txt").write_text("x\nx\n")
    (workspace / "folder").mkdir()
    calls = [
        {"tool": "edit", "args": {"path": "sample.py", "oldText": "value = 9", "newText": "value = 2"}},
        {"tool": "edit", "args": {"path": "twice.txt", "oldText": "x", "newText": "y"}},
        {"tool": "edit", "args": {"path": "missing.py", "oldText": "a", "newText": "b"}},
        {"tool": "write", "args": {"path": "folder", "content": "x"}},
    ]
    run_id, end, _ = await host.run_to_end(
        prompt="edit", workspace=str(workspace), model=script(tmp_path, *calls), mode="ask"
    )
    assert end["status"] == "settled"
    assert host.permission_requests == [] and host.of(run_id, "permission_request") == []
    assert host.of(run_id, "permission_resolved") == []
    outputs = [u["output"] for u in tool_updates(host, run_id)]
    assert [u["status"] for u in tool_updates(host, run_id)] == ["failed"] * 4
    assert outputs[0].startswith("Could not find the exact text in sample.py.")
    assert outputs[1].startswith("Found 2 occurrences of the text in twice.txt.")
    assert outputs[2] == "File not found: missing.py"
    assert outputs[3] == "Path is a directory: folder"
    assert (workspace / "sample.py").read_text() == SAMPLE


def _next_permission(raw: RawDaemon, got: list[dict[str, Any]]) -> dict[str, Any]:
    while True:
        message = raw._next(30.0)
        assert message is not None, "no agent/permission came"
        got.append(message)
        if message.get("method") == "agent/permission":
            return message


def _error_for(raw: RawDaemon, rid: str, got: list[dict[str, Any]]) -> dict[str, Any]:
    while True:
        message = raw._next(30.0)
        assert message is not None, "no answer to the refused newText came"
        got.append(message)
        if message.get("id") == rid and "error" in message:
            return message
        assert message.get("method") != "agent/permission", "the prompt was asked again instead"


def test_newtext_refused_keeps_the_prompt_open(workspace: Path, tmp_path: Path) -> None:
    raw = RawDaemon(daemon_env(STATE_DIR))
    try:
        raw.request("initialize", {"protocolVersion": 1})
        bash = {"tool": "bash", "args": {"command": "touch made.txt"}}
        reply, _ = raw.request(
            "agent/run",
            {
                "prompt": "go",
                "workspace": str(workspace),
                "model": script(tmp_path, EDIT, bash),
                "mode": "ask",
            },
        )
        run_id = reply["result"]["runId"]
        got: list[dict[str, Any]] = []
        edit = _next_permission(raw, got)
        rid = edit["id"]
        # a reject with newText: refused, nothing decided
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {"outcome": "selected", "optionId": "reject_once", "newText": MINE},
            }
        )
        error = assert_clean_error(_error_for(raw, rid, got))
        assert error["code"] == -32602 and "allow option" in error["message"]
        # the same prompt, answered again: the user's version lands
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {"outcome": "selected", "optionId": "allow_once", "newText": MINE},
            }
        )
        shell = _next_permission(raw, got)
        assert shell["params"]["toolCall"]["name"] == "bash"
        assert (workspace / "sample.py").read_text() == MINE
        # newText on a request without newText (a shell command): refused too, and the prompt stays open
        srid = shell["id"]
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": srid,
                "result": {"outcome": "selected", "optionId": "allow_once", "newText": "x"},
            }
        )
        error = assert_clean_error(_error_for(raw, srid, got))
        assert error["code"] == -32602 and "toolCall has newText" in error["message"]
        raw.send({"jsonrpc": "2.0", "id": srid, "result": {"outcome": "selected", "optionId": "reject_once"}})
        while True:
            message = raw._next(30.0)
            assert message is not None
            got.append(message)
            event = (message.get("params") or {}).get("event") or {}
            if event.get("type") == "run_end":
                break
        resolved = [
            m["params"]["event"]
            for m in got
            if m.get("method") == "agent/event" and m["params"]["event"]["type"] == "permission_resolved"
        ]
        assert [(r["decision"], r.get("edited")) for r in resolved] == [
            ("allow_once", True),
            ("reject_once", None),
        ]
        assert all(m["params"]["runId"] == run_id for m in got if m.get("method") == "agent/event")
        assert not (workspace / "made.txt").exists()
    finally:
        assert raw.close() == 0
    assert raw.bad_output == []
    assert b"Traceback" not in raw.stderr, raw.stderr.decode(errors="replace")
