"""Host-owned files and hunk-by-hunk review, end to end: the daemon as a subprocess over real pipes, a host that
serves (or never answers for) its buffers, reviews that outlive the daemon, conflicts left alone."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

from kgent_host import KgentHost

from helpers import conforms
from kgent.daemon.wire.files import (
    ApplyReviewResult,
    ReadTextFileParams,
    ReviewResult,
    SaveFilesParams,
    WriteTextFileParams,
)

A = "alpha\nbeta\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\n"
B = "alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\njuliet\n"
FS = {"fs": {"readTextFile": True, "writeTextFile": True, "saveFiles": True}}


def _hunks(review: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{'a.txt:beta→BETA' style key: hunk} over every run of a review."""
    out = {}
    for run in review["runs"]:
        for f in run["files"]:
            for h in f["hunks"]:
                out[f"{f['path']}:{h['newText'].strip()}"] = h
    return out


async def _four_hunks(h: KgentHost, workspace: Path) -> tuple[str, str, dict[str, dict[str, Any]]]:
    (workspace / "a.txt").write_text(A)
    (workspace / "b.txt").write_text(B)
    run_id, end, _ = await h.run_to_end(
        prompt="edit", workspace=str(workspace), mode="full", model="review-edits"
    )
    assert end["status"] == "settled" and end["changedPaths"] == ["a.txt", "b.txt"]
    review = await h.call("agent/review", {"runId": run_id})
    conforms(ReviewResult, review)
    return run_id, end["sessionId"], _hunks(review)


async def test_four_hunks_three_accepted_one_rejected_and_the_review_outlives_the_daemon(
    spawn: Any, workspace: Path
) -> None:
    h = await spawn()
    run_id, session_id, hunks = await _four_hunks(h, workspace)
    assert sorted(hunks) == ["a.txt:BETA", "a.txt:HOTEL", "b.txt:CHARLIE", "b.txt:INDIA"]
    assert all(x["status"] == "pending" and x["id"].startswith(run_id + ".") for x in hunks.values())
    beta = hunks["a.txt:BETA"]
    assert (beta["oldStart"], beta["oldCount"], beta["newStart"], beta["newCount"]) == (2, 1, 2, 1)
    assert (beta["oldText"], beta["newText"]) == ("beta\n", "BETA\n")
    assert all(x["currentStart"] == x["newStart"] for x in hunks.values())

    keep = [hunks[k]["id"] for k in ("a.txt:BETA", "b.txt:CHARLIE", "b.txt:INDIA")]
    drop = hunks["a.txt:HOTEL"]["id"]
    applied = await h.call("agent/applyReview", {"sessionId": session_id, "accept": keep, "reject": [drop]})
    conforms(ApplyReviewResult, applied)
    assert [(r["hunkId"], r["outcome"]) for r in applied["results"]] == [
        *((k, "accepted") for k in keep),
        (drop, "rejected"),
    ]
    assert applied["told"] == "next_prompt"
    assert (workspace / "a.txt").read_text() == A.replace("beta", "BETA")
    assert (workspace / "b.txt").read_text() == B.replace("charlie", "CHARLIE").replace("india", "INDIA")
    again = await h.call("agent/applyReview", {"sessionId": session_id, "reject": [drop, "run-x.9"]})
    assert [r["outcome"] for r in again["results"]] == ["already_rejected", "not_found"]
    await h.exit()

    restarted = await spawn()  # a new process: the statuses come from the session
    review = await restarted.call("agent/review", {"sessionId": session_id})
    statuses = {k: v["status"] for k, v in _hunks(review).items()}
    assert statuses == {
        "a.txt:BETA": "accepted",
        "a.txt:HOTEL": "rejected",
        "b.txt:CHARLIE": "accepted",
        "b.txt:INDIA": "accepted",
    }
    # The next prompt of the session carries the rejection, once.
    follow, end, events = await restarted.run_to_end(prompt="go on", sessionId=session_id, model="hello")
    said = next(e["text"] for e in events if e["type"] == "user_message")
    assert said.startswith("[Review] The user rejected") and "a.txt line 8" in said and "HOTEL" in said
    assert said.endswith("go on")
    _, _, events = await restarted.run_to_end(prompt="and now", sessionId=session_id, model="hello")
    assert next(e["text"] for e in events if e["type"] == "user_message") == "and now"


async def test_a_hunk_whose_lines_the_user_changed_is_a_conflict_and_left_alone(
    spawn: Any, workspace: Path
) -> None:
    h = await spawn()
    _, session_id, hunks = await _four_hunks(h, workspace)
    edited = "a line the user added\n" + (workspace / "a.txt").read_text().replace(
        "HOTEL", "HOTEL (the user's)"
    )
    (workspace / "a.txt").write_text(edited)
    now = _hunks(await h.call("agent/review", {"sessionId": session_id}))
    assert now["a.txt:BETA"]["currentStart"] == 3 and now["a.txt:HOTEL"]["currentStart"] is None
    ids = [hunks["a.txt:HOTEL"]["id"], hunks["a.txt:BETA"]["id"]]
    applied = await h.call("agent/applyReview", {"sessionId": session_id, "reject": ids})
    outcome = {r["hunkId"]: r for r in applied["results"]}
    assert outcome[ids[0]]["outcome"] == "conflict" and "changed" in outcome[ids[0]]["message"]
    assert outcome[ids[1]]["outcome"] == "rejected"  # its neighbour is independent
    assert (workspace / "a.txt").read_text() == edited.replace("BETA", "beta")
    review = _hunks(await h.call("agent/review", {"sessionId": session_id}))
    assert review["a.txt:HOTEL"]["status"] == "pending"
    assert (review["a.txt:BETA"]["status"], review["a.txt:BETA"]["currentStart"]) == ("rejected", None)


async def test_a_shell_changed_file_is_reviewed_and_rejected_too(spawn: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text(A)
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q"], cwd=workspace, check=True)
    h = await spawn()
    run_id, end, _ = await h.run_to_end(
        prompt="sed", workspace=str(workspace), mode="full", model="shell-edit"
    )
    assert end["changedPaths"] == ["a.txt"]
    hunks = _hunks(await h.call("agent/review", {"runId": run_id}))
    assert list(hunks) == ["a.txt:BETA"] and hunks["a.txt:BETA"]["oldText"] == "beta\n"
    applied = await h.call(
        "agent/applyReview", {"sessionId": end["sessionId"], "reject": [hunks["a.txt:BETA"]["id"]]}
    )
    assert applied["results"][0]["outcome"] == "rejected"
    assert (workspace / "a.txt").read_text() == A


async def test_the_agent_reads_and_edits_the_unsaved_buffer_and_the_host_saves_before_a_shell_call(
    spawn: Any, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("on disk\n")
    buffers = {str(notes): "note: unsaved in the editor\n"}

    def editor(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "agent/readTextFile":
            conforms(ReadTextFileParams, params)
            return {"content": buffers.get(params["path"])}
        if method == "agent/writeTextFile":
            conforms(WriteTextFileParams, params)
            if params["path"] not in buffers:
                return {"applied": False}
            buffers[params["path"]] = params["content"]
            return {"applied": True}
        conforms(SaveFilesParams, params)
        for path in params["paths"]:
            Path(path).write_text(buffers[path])
        return {"saved": params["paths"]}

    h = await spawn(initialize=False)
    await h.initialize(capabilities=FS)
    h.files = editor
    run_id, end, events = await h.run_to_end(
        prompt="edit", workspace=str(workspace), mode="ask", model="buffer-edit"
    )
    assert end["status"] == "settled"
    outputs = [
        e.get("output", "") for e in events if e["type"] == "tool_update" and e["status"] == "completed"
    ]
    assert "note: unsaved in the editor" in outputs[0]  # the read saw the buffer
    asked = [p for p in h.permission_requests if p["toolCall"]["name"] == "edit"]
    assert asked[0]["toolCall"]["oldText"] == "note: unsaved in the editor\n"  # and so did the approval diff
    assert buffers[str(notes)] == "NOTE: unsaved in the editor\n"
    methods = [m for m, _ in h.file_requests]
    assert "agent/writeTextFile" in methods and methods.index("agent/saveFiles") > methods.index(
        "agent/writeTextFile"
    )
    save = next(p for m, p in h.file_requests if m == "agent/saveFiles")
    assert save["paths"] == [str(notes)] and save["runId"] == run_id
    assert "NOTE: unsaved in the editor" in outputs[-1]  # the shell saw the saved file
    assert notes.read_text() == "NOTE: unsaved in the editor\n"
    # The review's before is the buffer's text, not the disk's.
    hunks = _hunks(await h.call("agent/review", {"runId": run_id}))
    assert hunks["notes.txt:NOTE: unsaved in the editor"]["oldText"] == "note: unsaved in the editor\n"


async def test_a_host_that_never_answers_costs_one_timeout_and_the_run_goes_on_from_disk(
    spawn: Any, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("note on disk\n")
    never: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def silent(method: str, params: dict[str, Any]) -> Any:
        return await never  # no answer, ever

    h = await spawn(initialize=False)
    await h.initialize(capabilities=FS, fsTimeout=1)
    h.files = silent
    _, end, events = await h.run_to_end(
        prompt="edit", workspace=str(workspace), mode="full", model="buffer-edit"
    )
    assert end["status"] == "settled"
    outputs = [
        e.get("output", "") for e in events if e["type"] == "tool_update" and e["status"] == "completed"
    ]
    assert "note on disk" in outputs[0] and "did not answer agent/readTextFile" in outputs[0]
    # One read request timed out (and was withdrawn); later reads went straight to the disk.
    reads = [p for m, p in h.file_requests if m == "agent/readTextFile"]
    assert len(reads) == 1
    await h.wait_for(lambda: len(h.withdrawn) >= 1, what="the withdrawn read")
    # The edit reached the disk (the write timed out too, then fell back), nothing was lost.
    assert (workspace / "notes.txt").read_text() == "NOTE on disk\n"
    never.cancel()
