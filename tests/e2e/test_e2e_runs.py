"""Runs over the wire: approvals (allow once / always / reject), steering, follow-ups, concurrency, refusals."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest
from kgent_host import KgentHost, allow_once, check_stream, reply_before_events, select
from pygls.exceptions import JsonRpcException


def write_script(path: Path, turns: list[list[dict[str, Any]]]) -> str:
    path.write_text(json.dumps(turns))
    return str(path)


# A run that stays live until the test says so: its first turn asks to write a file (in ask mode), and the host
# holds the answer until `release` is set. A run that only slept would end on its own on a slow machine.
HELD = [
    [{"text": "Writing notes."}, {"tool": "write", "args": {"path": "notes.txt", "content": "notes\n"}}],
    [{"text": "Done."}],
]


def hold_approvals(host: KgentHost) -> asyncio.Event:
    release = asyncio.Event()

    async def held(params: dict[str, Any]) -> dict[str, Any]:
        await release.wait()
        return allow_once(params)

    host.policy = held
    return release


async def start_held_run(host: KgentHost, workspace: Path) -> tuple[str, str, asyncio.Event]:
    """(runId, sessionId, release): the run is waiting on its approval when this returns."""
    release = hold_approvals(host)
    script = write_script(workspace.parent / "held.json", HELD)
    run_id, session_id = await host.start_run(
        prompt="Think slowly", workspace=str(workspace), model=script, mode="ask"
    )
    await host.wait_for(lambda: host.permission_requests, what="the run's approval request")
    return run_id, session_id, release


async def test_full_run_with_allow_once(host: KgentHost, workspace: Path) -> None:
    result = await host.call(
        "agent/run",
        {"prompt": "Set value to 2", "workspace": str(workspace), "model": "tool-loop", "mode": "ask"},
        msg_id="run-1",
    )
    run_id, session_id = result["runId"], result["sessionId"]
    end = await host.wait_end(run_id)
    check_stream(host, run_id)
    assert reply_before_events(host, "run-1", run_id)

    assert end["status"] == "settled" and end["stopReason"] == "end"
    assert end["sessionId"] == session_id and end["turns"] == 4
    assert end["changedPaths"] == ["sample.py"]
    assert "-value = 1" in end["patch"] and "+value = 2" in end["patch"]
    assert (workspace / "sample.py").read_text() == "value = 2\nprint(value)\n"

    events = host.of(run_id)
    assert events[0]["type"] == "run_start" and events[0]["workspace"] == str(workspace)
    assert {"user_message", "message_delta", "message_end", "tool_call", "tool_update", "usage"} <= {
        e["type"] for e in events
    }
    # ask mode: the read runs unasked; the edit and the bash call are the editor's to decide.
    asked = host.permission_requests
    assert [r["toolCall"]["name"] for r in asked] == ["edit", "bash"]
    edit = asked[0]
    assert edit["runId"] == run_id and edit["sessionId"] == session_id
    assert edit["toolCall"]["kind"] == "edit" and edit["toolCall"]["path"] == "sample.py"
    assert (
        "+value = 2" in edit["toolCall"]["diff"]
        and edit["toolCall"]["newText"] == "value = 2\nprint(value)\n"
    )
    assert edit["risk"] in ("low", "medium", "high") and edit["reason"]
    # an untrusted project: 'always in this project' is kept in the user's own file for it (the name says so)
    assert [(o["optionId"], o["kind"], o.get("scope")) for o in edit["options"]] == [
        ("allow_once", "allow_once", None),
        ("allow_always", "allow_always", "session"),
        ("allow_always_project", "allow_always", "project"),
        ("reject_once", "reject_once", None),
        ("reject_always", "reject_always", "session"),
        ("reject_always_project", "reject_always", "project"),
    ]
    assert edit["options"][1]["name"] == "Allow edits to `sample.py` this session"
    assert edit["options"][2]["name"].endswith("in this project (kept in your settings)")
    assert asked[1]["toolCall"]["command"].startswith("grep")
    # The JSON-RPC id of each prompt is its requestId, and the prompt follows its permission_request event.
    for request in asked:
        rid = request["requestId"]
        where = host.wire.index(("request", "agent/permission", rid))
        event = next(p for p in host.events[run_id] if p["event"].get("requestId") == rid)
        assert host.wire.index(("event", run_id, event["seq"])) < where
    resolved = host.of(run_id, "permission_resolved")
    assert [(r["decision"], r["approved"], r["source"]) for r in resolved] == [
        ("allow_once", True, "host")
    ] * 2
    assert host.withdrawn == []


async def test_allow_always_is_not_asked_again(host: KgentHost, workspace: Path) -> None:
    host.policy = select("allow_always")
    run_id, end, events = await host.run_to_end(
        prompt="Write notes", workspace=str(workspace), model="two-writes"
    )
    assert end["status"] == "settled"
    assert len(host.permission_requests) == 1
    resolved = host.of(run_id, "permission_resolved")
    assert [(r["source"], r["approved"]) for r in resolved] == [("host", True), ("session_rule", True)]
    assert "requestId" not in resolved[1] or resolved[1]["requestId"] is None
    assert (workspace / "notes.txt").read_text() == "second\n"


async def test_reject_feeds_permission_denied_to_the_model(host: KgentHost, workspace: Path) -> None:
    host.policy = select("reject_once")
    run_id, end, events = await host.run_to_end(
        prompt="Set value to 2", workspace=str(workspace), model="tool-loop"
    )
    assert end["status"] == "settled" and end["changedPaths"] == [] and end["patch"] == ""
    assert (workspace / "sample.py").read_text() == "value = 1\nprint(value)\n"
    denied = [e for e in host.of(run_id, "tool_update") if e["status"] == "failed"]
    assert len(denied) == 2 and all(
        e["isError"] and e["output"].startswith("permission_denied") for e in denied
    )
    # The model saw the refusals as tool results (they are in the session).
    session = await host.call("agent/session", {"sessionId": end["sessionId"]})
    results = [
        e["message"] for e in session["entries"] if e["type"] == "message" and e["message"]["role"] == "tool"
    ]
    assert sum(r["content"].startswith("permission_denied") for r in results) == 2


def _raise(params: dict[str, Any]) -> Any:
    raise RuntimeError("the editor's prompt crashed")


@pytest.mark.parametrize(
    "policy",
    [
        lambda p: {"outcome": "cancelled"},
        lambda p: {"outcome": "selected", "optionId": "not-offered"},
        lambda p: {"decision": "allow"},
        lambda p: None,
        _raise,
    ],
    ids=["cancelled", "unknown-option", "wrong-shape", "null", "error-reply"],
)
async def test_anything_but_a_selection_is_a_reject(host: KgentHost, workspace: Path, policy: Any) -> None:
    host.policy = policy
    run_id, end, _ = await host.run_to_end(
        prompt="Set value to 2", workspace=str(workspace), model="tool-loop"
    )
    assert end["status"] == "settled"
    assert [r["approved"] for r in host.of(run_id, "permission_resolved")] == [False, False]
    assert (workspace / "sample.py").read_text() == "value = 1\nprint(value)\n"


async def test_acp_nested_outcome_is_understood(host: KgentHost, workspace: Path) -> None:
    host.policy = lambda p: {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    run_id, end, _ = await host.run_to_end(
        prompt="Set value to 2", workspace=str(workspace), model="tool-loop"
    )
    assert [r["approved"] for r in host.of(run_id, "permission_resolved")] == [True, True]
    assert end["changedPaths"] == ["sample.py"]


async def test_eight_concurrent_runs_with_approvals_answered_out_of_order(
    host: KgentHost, tmp_path: Path
) -> None:
    n = 8
    gates: dict[str, asyncio.Future[dict[str, Any]]] = {}

    async def hold(params: dict[str, Any]) -> dict[str, Any]:
        gates[params["requestId"]] = asyncio.get_running_loop().create_future()
        return await gates[params["requestId"]]

    host.policy = hold
    workspaces = []
    for i in range(n):
        ws = tmp_path / f"ws{i}"
        ws.mkdir()
        (ws / "sample.py").write_text("value = 1\nprint(value)\n")
        workspaces.append(ws)
    runs = await asyncio.gather(
        *(
            host.start_run(prompt=f"task {i}", workspace=str(ws), model="tool-loop")
            for i, ws in enumerate(workspaces)
        )
    )
    assert len({sid for _, sid in runs}) == n
    rng = random.Random(5)
    for _ in range(2):  # the edits, then the bash calls
        await host.wait_for(lambda: sum(not f.done() for f in gates.values()) == n, what=f"{n} open prompts")
        # While every run waits on the editor, the daemon still answers requests at once.
        assert "sessions" in await host.call("agent/sessions", {"workspace": str(workspaces[0])}, within=10)
        pending = [rid for rid, f in gates.items() if not f.done()]
        rng.shuffle(pending)
        for rid in pending:
            gates[rid].set_result(allow_once({}))
            await asyncio.sleep(0.005)
    ends = [await host.wait_end(run_id) for run_id, _ in runs]
    assert all(e["status"] == "settled" and e["changedPaths"] == ["sample.py"] for e in ends)
    for (run_id, _), ws in zip(runs, workspaces, strict=True):
        check_stream(host, run_id)
        assert (ws / "sample.py").read_text() == "value = 2\nprint(value)\n"
        # Each run's prompts carry its own ids.
        assert all(
            r["runId"] == run_id for r in host.permission_requests if r["requestId"].startswith(run_id)
        )
    # The streams really interleaved.
    order = [w[1] for w in host.wire if w[0] == "event"]
    switches = sum(a != b for a, b in zip(order, order[1:], strict=False))
    assert switches > n


async def test_steer_reaches_the_model_mid_run(host: KgentHost, workspace: Path) -> None:
    run_id, _, release = await start_held_run(host, workspace)
    assert await host.call("agent/steer", {"runId": run_id, "text": "Use value 3, not 2."}) == {}
    release.set()
    end = await host.wait_end(run_id)
    check_stream(host, run_id)
    # The steer goes in after the write's batch; the script starts over for it (write, then answer): three turns.
    assert end["status"] == "settled" and end["turns"] == 3
    users = host.of(run_id, "user_message")
    assert [(u["source"], u["text"]) for u in users] == [
        ("prompt", "Think slowly"),
        ("steer", "Use value 3, not 2."),
    ]
    queues = host.of(run_id, "queue_update")
    assert queues[0]["steering"] == ["Use value 3, not 2."] and queues[-1] == {
        "type": "queue_update",
        "steering": [],
        "followUp": [],
    }


async def test_follow_up_extends_the_run(host: KgentHost, workspace: Path) -> None:
    run_id, _, release = await start_held_run(host, workspace)
    assert await host.call("agent/followUp", {"runId": run_id, "text": "Then add a test."}) == {}
    release.set()
    end = await host.wait_end(run_id)
    check_stream(host, run_id)
    # The follow-up comes once the run would settle (after the script's two turns), and the script plays again.
    assert end["status"] == "settled" and end["turns"] == 4
    assert [u["source"] for u in host.of(run_id, "user_message")] == ["prompt", "follow_up"]
    # Steering or following up a run that has ended is refused; unknown runs are not found.
    with pytest.raises(JsonRpcException) as ended:
        await host.call("agent/steer", {"runId": run_id, "text": "too late"})
    assert ended.value.code == -32003 and ended.value.data["code"] == "run_not_live"
    with pytest.raises(JsonRpcException) as unknown:
        await host.call("agent/followUp", {"runId": "run-nope", "text": "who?"})
    assert unknown.value.code == -32002 and unknown.value.data["code"] == "run_not_found"


async def test_clear_queue_drops_what_the_model_has_not_seen(host: KgentHost, workspace: Path) -> None:
    run_id, _, release = await start_held_run(host, workspace)
    await host.call("agent/steer", {"runId": run_id, "text": "Use value 3, not 2."})
    await host.call("agent/followUp", {"runId": run_id, "text": "Then add a test."})
    assert await host.call("agent/clearQueue", {"runId": run_id}) == {}
    release.set()
    end = await host.wait_end(run_id)
    check_stream(host, run_id)
    # Neither message reached the model: the script's two turns, the prompt only.
    assert end["status"] == "settled" and end["turns"] == 2
    users = host.of(run_id, "user_message")
    assert [u["source"] for u in users] == ["prompt"]
    # The message names its session entry (what a host forks at to edit and resend it).
    session = await host.call("agent/session", {"sessionId": end["sessionId"]})
    entry = next(e for e in session["entries"] if e["id"] == users[0]["entryId"])
    assert entry["message"] == {"role": "user", "text": "Think slowly"}
    queues = host.of(run_id, "queue_update")
    assert queues[1] == {
        "type": "queue_update",
        "steering": ["Use value 3, not 2."],
        "followUp": ["Then add a test."],
    }
    assert queues[-1] == {"type": "queue_update", "steering": [], "followUp": []}
    with pytest.raises(JsonRpcException) as ended:
        await host.call("agent/clearQueue", {"runId": run_id})
    assert ended.value.code == -32003 and ended.value.data["code"] == "run_not_live"
    with pytest.raises(JsonRpcException) as unknown:
        await host.call("agent/clearQueue", {"runId": "run-nope"})
    assert unknown.value.code == -32002 and unknown.value.data["code"] == "run_not_found"


async def test_second_run_on_a_live_session_is_refused(host: KgentHost, workspace: Path) -> None:
    run_id, session_id, release = await start_held_run(host, workspace)
    with pytest.raises(JsonRpcException) as busy:
        await host.call("agent/run", {"prompt": "again", "sessionId": session_id})
    assert busy.value.code == -32003
    assert busy.value.data == {"code": "session_busy", "runId": run_id}
    assert run_id in busy.value.message
    release.set()
    end = await host.wait_end(run_id)
    assert end["status"] == "settled"


async def test_missing_key_says_what_to_set(spawn: Any, workspace: Path) -> None:
    h = await spawn(KGENT_PROVIDER="openai")
    with pytest.raises(JsonRpcException) as missing:
        await h.call("agent/run", {"prompt": "hi", "workspace": str(workspace)})
    assert missing.value.code == -32001 and missing.value.data == {"code": "missing_api_key"}
    assert "KGENT_API_KEY" in missing.value.message and "DEEPSEEK_API_KEY" in missing.value.message
    # Another provider for one run is fine, and so is a connection-wide switch in initialize.
    _, end, _ = await h.run_to_end(prompt="hi", workspace=str(workspace), provider="scripted", model="hello")
    assert end["status"] == "settled"
    await h.initialize(provider="scripted", model="streamed-run")
    run_id, end, _ = await h.run_to_end(prompt="hi", workspace=str(workspace))
    assert h.of(run_id)[0]["model"] == "streamed-run" and end["status"] == "settled"


async def test_max_turns_from_the_environment_the_settings_and_the_run(spawn: Any, workspace: Path) -> None:
    h = await spawn(KGENT_PROVIDER="scripted", KGENT_MAX_TURNS="3", KGENT_PERMISSION_MODE="full")
    forever = write_script(workspace.parent / "forever.json", [[{"tool": "ls", "args": {}}]])

    async def turns(**params: Any) -> int:
        _, end, _ = await h.run_to_end(prompt="loop", workspace=str(workspace), model=forever, **params)
        assert end["status"] == "failed" and end["stopReason"] == end["error"]["code"] == "max_turns"
        return int(end["turns"])

    assert await turns() == 3  # KGENT_MAX_TURNS
    await h.initialize(maxTurns=2)
    assert await turns() == 2  # settings.maxTurns
    assert await turns(maxTurns=4) == 4  # the run's own
    with pytest.raises(JsonRpcException) as bad:
        await h.call("agent/run", {"prompt": "x", "workspace": str(workspace), "maxTurns": 0})
    assert bad.value.code == -32602 and "maxTurns" in bad.value.message
    with pytest.raises(JsonRpcException) as bad_setting:
        await h.initialize(maxTurns="5")
    assert bad_setting.value.code == -32602


async def test_prompt_content_blocks(host: KgentHost, workspace: Path) -> None:
    blocks = [
        {"type": "text", "text": "Explain this."},
        {"type": "resource_link", "uri": "file:///x/util.py", "name": "util.py"},
        {"type": "resource", "resource": {"uri": "file:///x/util.py", "text": "def f(): pass"}},
    ]
    run_id, end, _ = await host.run_to_end(prompt=blocks, workspace=str(workspace))
    prompt = host.of(run_id)[0]["prompt"]
    assert (
        prompt
        == 'Explain this.\n\n[util.py](file:///x/util.py)\n\n<resource uri="file:///x/util.py">\ndef f(): pass\n</resource>'
    )
    with pytest.raises(JsonRpcException) as image:
        await host.call(
            "agent/run",
            {"prompt": [{"type": "image", "data": "", "mimeType": "image/png"}], "workspace": str(workspace)},
        )
    assert image.value.code == -32602 and "image" in image.value.message


async def test_failed_provider_ends_the_run_failed(host: KgentHost, workspace: Path) -> None:
    _, end, _ = await host.run_to_end(prompt="hi", workspace=str(workspace), model="provider-error")
    assert end["status"] == "failed" and end["stopReason"] == "error"
    assert end["error"]["code"] == "scripted_error"


async def test_the_client_may_cancel_a_prompt(host: KgentHost, workspace: Path) -> None:
    """A `$/cancelRequest` from the editor for a prompt's id is a reject, and the run goes on."""
    forever: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    host.policy = lambda params: forever

    async def cancel_prompts() -> None:
        for seen in range(1_000):
            await host.wait_for(lambda n=seen: len(host.permission_requests) > n, what="a prompt")
            host.protocol.notify("$/cancelRequest", {"id": host.permission_requests[seen]["requestId"]})

    canceller = asyncio.get_running_loop().create_task(cancel_prompts())
    try:
        run_id, end, _ = await host.run_to_end(
            prompt="Set value to 2", workspace=str(workspace), model="tool-loop"
        )
    finally:
        canceller.cancel()
    assert end["status"] == "settled"
    assert [(r["approved"], r["source"]) for r in host.of(run_id, "permission_resolved")] == [
        (False, "host")
    ] * 2


async def test_the_daemon_logs_its_life_and_each_run_at_info(spawn, workspace: Path, tmp_path: Path) -> None:
    log_file = tmp_path / "kgent.log"
    host = await spawn(KGENT_LOG_LEVEL="INFO", KGENT_LOG_FILE=str(log_file))
    run_id, end, _ = await host.run_to_end(prompt="hi", workspace=str(workspace))
    assert end["status"] == "settled"
    assert await host.exit(within=30.0) == 0
    text = log_file.read_text()
    assert "serving on stdio (pid " in text
    assert f"run {run_id} started" in text
    assert f"run {run_id} ended settled (end) after 1 turn(s)" in text
    assert "kgent daemon stopped" in text
