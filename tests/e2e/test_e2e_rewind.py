"""Rewind end to end (`agent/rewind`): the daemon as a subprocess, real files, a git work tree or none. Restoring to a
user message brings back the files the runs after it changed (write tools and, in git, shell commands), reports a
file the user changed since as a conflict, and forks the conversation just before the message."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

from kgent_host import KgentHost

from helpers import conforms
from kgent.service.wire.files import RewindResult, WriteTextFileParams

A = "alpha\nbeta\ngamma\n"
B = "alpha\nbravo\ncharlie\n"
C = "charlie\ndelta\necho\n"
FS = {"fs": {"readTextFile": True, "writeTextFile": True, "saveFiles": True}}


def _files(workspace: Path, git: bool) -> None:
    (workspace / "a.txt").write_text(A)
    (workspace / "b.txt").write_text(B)
    (workspace / "c.txt").write_text(C)
    if git:
        subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)


async def _user_messages(h: KgentHost, session_id: str) -> list[dict[str, Any]]:
    session = await h.call("agent/session", {"sessionId": session_id})
    return [e for e in session["entries"] if e["type"] == "message" and e["message"]["role"] == "user"]


async def _rewind(h: KgentHost, session_id: str, entry_id: str, dry_run: bool = False) -> dict[str, Any]:
    result = await h.call("agent/rewind", {"sessionId": session_id, "entryId": entry_id, "dryRun": dry_run})
    conforms(RewindResult, result)
    return result


def _outcomes(result: dict[str, Any]) -> dict[str, str]:
    return {f["path"]: f["outcome"] for f in result["files"]}


async def test_rewind_restores_two_edits_and_a_sed_in_git_reports_the_users_file_and_forks(
    spawn: Any, workspace: Path
) -> None:
    await asyncio.to_thread(_files, workspace, True)
    h = await spawn()
    _, first, _ = await h.run_to_end(prompt="hi", workspace=str(workspace), mode="full", model="hello")
    sid = first["sessionId"]
    _, end, _ = await h.run_to_end(prompt="change them", sessionId=sid, mode="full", model="rewind-edits")
    assert end["changedPaths"] == ["a.txt", "b.txt", "c.txt", "new.txt"]
    assert (workspace / "c.txt").read_text() == C.replace("delta", "DELTA")  # the shell command did it
    (workspace / "b.txt").write_text(B.replace("charlie", "CHARLIE") + "the user's line\n")  # after the run
    checkpoint = (await _user_messages(h, sid))[-1]
    assert checkpoint["message"]["text"] == "change them"

    dry = await _rewind(h, sid, checkpoint["id"], dry_run=True)
    assert _outcomes(dry) == {
        "a.txt": "restored",
        "b.txt": "conflict",
        "c.txt": "restored",
        "new.txt": "restored",
    }
    assert "changed since" in next(f["reason"] for f in dry["files"] if f["path"] == "b.txt")
    assert dry["notes"] == [] and dry["forked"] is False and dry["prompt"] == "change them"
    assert (workspace / "new.txt").exists() and (workspace / "a.txt").read_text() != A  # nothing written

    done = await _rewind(h, sid, checkpoint["id"])
    assert _outcomes(done) == _outcomes(dry) and done["forked"] is True
    assert (workspace / "a.txt").read_text() == A
    assert (workspace / "c.txt").read_text() == C
    assert not (workspace / "new.txt").exists()
    assert (workspace / "b.txt").read_text() == B.replace("charlie", "CHARLIE") + "the user's line\n"
    # The conversation forks just before the message: the next prompt continues from the first run's answer.
    session = await h.call("agent/session", {"sessionId": sid, "branchOnly": True})
    assert session["branch"][-1] == done["leafId"] == checkpoint["parentId"]
    _, again, _ = await h.run_to_end(prompt="something else", sessionId=sid, model="hello")
    assert again["status"] == "settled"
    texts = [m["message"]["text"] for m in await _user_messages(h, sid)]
    branch = (await h.call("agent/session", {"sessionId": sid, "branchOnly": True}))["entries"]
    on_branch = [
        e["message"]["text"] for e in branch if e["type"] == "message" and e["message"]["role"] == "user"
    ]
    assert (
        on_branch == ["hi", "something else"] and "change them" in texts
    )  # the old branch stays in the tree


async def test_outside_git_the_shell_commands_are_named_and_the_edits_restored(
    spawn: Any, workspace: Path
) -> None:
    await asyncio.to_thread(_files, workspace, False)
    h = await spawn()
    _, end, _ = await h.run_to_end(
        prompt="change them", workspace=str(workspace), mode="full", model="rewind-edits"
    )
    sid = end["sessionId"]
    checkpoint = (await _user_messages(h, sid))[0]
    dry = await _rewind(h, sid, checkpoint["id"], dry_run=True)
    assert _outcomes(dry) == {"a.txt": "restored", "b.txt": "restored", "new.txt": "restored"}
    assert len(dry["notes"]) == 1
    assert (
        "outside a git work tree" in dry["notes"][0] and "sed -i 's/^delta$/DELTA/' c.txt" in dry["notes"][0]
    )
    done = await _rewind(h, sid, checkpoint["id"])
    assert done["notes"] == dry["notes"]
    assert (workspace / "a.txt").read_text() == A and (workspace / "b.txt").read_text() == B
    assert (workspace / "c.txt").read_text() == C.replace("delta", "DELTA")  # not known, not restored


async def test_rewind_walks_back_every_later_run_and_an_earlier_checkpoint_only_its_own(
    spawn: Any, workspace: Path, tmp_path: Path
) -> None:
    await asyncio.to_thread(_files, workspace, True)
    second = tmp_path / "second.json"
    second.write_text(
        json.dumps(
            [
                [
                    {"tool": "edit", "args": {"path": "a.txt", "oldText": "BETA\n", "newText": "BETA 2\n"}},
                    {"tool": "edit", "args": {"path": "a.txt", "oldText": "gamma\n", "newText": "GAMMA\n"}},
                ],
                [{"text": "Changed a.txt again."}],
            ]
        )
    )
    h = await spawn()
    _, end, _ = await h.run_to_end(prompt="one", workspace=str(workspace), mode="full", model="rewind-edits")
    sid = end["sessionId"]
    _, end2, _ = await h.run_to_end(prompt="two", sessionId=sid, mode="full", model=str(second))
    assert end2["changedPaths"] == ["a.txt"]
    assert (workspace / "a.txt").read_text() == "alpha\nBETA 2\nGAMMA\n"
    one, two = await _user_messages(h, sid)
    dry = await _rewind(h, sid, two["id"], dry_run=True)
    assert _outcomes(dry) == {"a.txt": "restored"}  # only the second run is after "two"
    done = await _rewind(h, sid, one["id"])
    assert _outcomes(done) == {
        "a.txt": "restored",
        "b.txt": "restored",
        "c.txt": "restored",
        "new.txt": "restored",
    }
    assert (workspace / "a.txt").read_text() == A


async def test_a_checkpoint_must_be_a_user_message_on_the_active_branch(spawn: Any, workspace: Path) -> None:
    h = await spawn()
    _, end, _ = await h.run_to_end(prompt="hi", workspace=str(workspace), mode="full", model="hello")
    sid = end["sessionId"]
    session = await h.call("agent/session", {"sessionId": sid})
    answer = next(
        e for e in session["entries"] if e["type"] == "message" and e["message"]["role"] == "assistant"
    )
    errors = []
    for entry_id in (answer["id"], "nope"):
        try:
            await h.call("agent/rewind", {"sessionId": sid, "entryId": entry_id})
        except Exception as exc:  # the JSON-RPC error, as pygls raises it
            errors.append(str(exc))
    assert len(errors) == 2 and "not a user message" in errors[0] and "no entry" in errors[1]


async def test_an_open_buffer_is_restored_through_the_editor_not_the_disk(
    spawn: Any, workspace: Path
) -> None:
    await asyncio.to_thread(_files, workspace, True)
    h = await spawn(initialize=False)
    await h.initialize(capabilities=FS)
    a = str(workspace / "a.txt")
    buffers = {a: A}

    def editor(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "agent/readTextFile":
            return {"content": buffers.get(params["path"])}
        if method == "agent/writeTextFile":
            conforms(WriteTextFileParams, params)
            if params["path"] not in buffers:
                return {"applied": False}
            buffers[params["path"]] = params["content"]
            return {"applied": True}
        for path in params["paths"]:
            Path(path).write_text(buffers[path])
        return {"saved": params["paths"]}

    h.files = editor
    _, end, _ = await h.run_to_end(
        prompt="change them", workspace=str(workspace), mode="full", model="rewind-edits"
    )
    sid = end["sessionId"]
    assert buffers[a] == A.replace("beta", "BETA")
    checkpoint = (await _user_messages(h, sid))[0]
    h.file_requests.clear()
    done = await _rewind(h, sid, checkpoint["id"])
    assert _outcomes(done)["a.txt"] == "restored"
    assert buffers[a] == A  # the editor's document, not clobbered on disk behind it
    writes = [p["path"] for m, p in h.file_requests if m == "agent/writeTextFile"]
    assert a in writes and "runId" not in next(p for m, p in h.file_requests if m == "agent/writeTextFile")
