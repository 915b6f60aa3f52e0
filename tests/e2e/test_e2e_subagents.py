"""Sub-agents over the wire: a `task` call's sub-run streams as a run of its own with `parentRunId`, its approvals
reach the host naming it, and a cancel of the parent (or of the sub-run alone) stops it mid-command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kgent_host import KgentHost, allow_once, check_stream

LONG = {
    "turns": [
        [{"tool": "task", "args": {"description": "Wait a while", "prompt": "wait", "tools": ["bash"]}}],
        [{"text": "The sub-agent did not finish."}],
    ],
    "prompts": {
        "wait": [[{"tool": "bash", "args": {"command": "echo started; sleep 60"}}], [{"text": "slept"}]]
    },
}


def sub_runs(host: KgentHost, parent: str) -> list[str]:
    return [rid for rid, params in host.events.items() if params and params[0].get("parentRunId") == parent]


async def test_a_sub_agents_approval_reaches_the_host_naming_it(host: KgentHost, workspace: Path) -> None:
    run_id, end, events = await host.run_to_end(
        prompt="What does sample.py print?", workspace=str(workspace), model="task", mode="ask"
    )
    assert end["status"] == "settled" and end["text"] == "The sub-agent ran sample.py: it prints 1."
    [sub] = sub_runs(host, run_id)
    check_stream(host, sub)  # its own gap-free seq, one run_end, every event valid
    sub_events = host.of(sub)
    assert all(p["parentRunId"] == run_id for p in host.events[sub])
    start = sub_events[0]
    [task_call] = [e for e in events if e["type"] == "tool_call"]
    assert start["type"] == "run_start" and start["parentRunId"] == run_id
    assert start["parentToolCallId"] == task_call["toolCallId"] and start["agent"] == "Check sample.py"
    assert task_call["name"] == "task" and task_call["kind"] == "think"
    # the sub-agent's command was asked (its read was not), the prompt names it and its run
    [asked] = host.permission_requests
    assert asked["runId"] == sub and asked["parentRunId"] == run_id and asked["agent"] == "Check sample.py"
    assert asked["toolCall"]["command"] == "python3 sample.py"
    [event] = [e for e in sub_events if e["type"] == "permission_request"]
    assert event["agent"] == "Check sample.py"
    assert [e["name"] for e in sub_events if e["type"] == "tool_call"] == ["read", "bash"]
    resolved = [e for e in sub_events if e["type"] == "permission_resolved"]
    assert [(r["decision"], r["source"]) for r in resolved] == [("allow_once", "host")]
    final = [e for e in events if e["type"] == "tool_update" and e["status"] == "completed"]
    assert final[-1]["output"] == "sample.py prints 1." and final[-1]["details"]["runId"] == sub
    # the parent's stream carries none of the sub-run's events
    assert not any(e["type"] == "run_start" for e in events[1:])

    # the session: the parent's branch goes on without the sub-run's entries
    session = await host.call("agent/session", {"sessionId": end["sessionId"]})
    by_id = {e["id"]: e for e in session["entries"]}
    branch, at = [], session["leafId"]
    while at is not None:
        branch.append(by_id[at]["type"])
        at = by_id[at]["parentId"]
    [marker] = [e for e in session["entries"] if e["type"] == "subrun"]
    assert "subrun" not in branch and marker["runId"] == sub and marker["agent"] == "Check sample.py"


async def test_cancelling_the_parent_cancels_the_sub_agent_mid_command(
    host: KgentHost, workspace: Path
) -> None:
    script = workspace.parent / "long.json"
    script.write_text(json.dumps(LONG))
    run_id, _ = await host.start_run(prompt="Wait", workspace=str(workspace), model=str(script), mode="full")

    def started() -> Any:
        for sub in sub_runs(host, run_id):
            if any("started" in (e.get("output") or "") for e in host.of(sub, "tool_update")):
                return sub
        return None

    sub = await host.wait_for(started, within=60, what="the sub-agent's command to start")
    assert await host.call("agent/cancel", {"runId": run_id}) == {"cancelled": True}
    end = await host.wait_end(run_id)
    assert end["status"] == "cancelled"
    check_stream(host, run_id)
    check_stream(host, sub)
    assert host.of(sub)[-1]["status"] == "cancelled"
    [bash_final] = [e for e in host.of(sub, "tool_update") if e["status"] == "failed"]
    assert bash_final["output"].startswith("started") or "cancelled" in bash_final["output"]
    # the sub-run ended before its parent did, on the wire
    sub_end = host.wire.index(("event", sub, host.events[sub][-1]["seq"]))
    assert sub_end < host.wire.index(("event", run_id, host.events[run_id][-1]["seq"]))


async def test_cancelling_only_the_sub_agent_fails_its_task_and_the_parent_goes_on(
    host: KgentHost, workspace: Path
) -> None:
    script = workspace.parent / "long.json"
    script.write_text(json.dumps(LONG))
    host.policy = allow_once
    run_id, _ = await host.start_run(prompt="Wait", workspace=str(workspace), model=str(script), mode="full")

    def started() -> Any:
        for sub in sub_runs(host, run_id):
            if any("started" in (e.get("output") or "") for e in host.of(sub, "tool_update")):
                return sub
        return None

    sub = await host.wait_for(started, within=60, what="the sub-agent's command to start")
    assert await host.call("agent/cancel", {"runId": sub}) == {"cancelled": True}
    end = await host.wait_end(run_id)
    assert end["status"] == "settled" and end["text"] == "The sub-agent did not finish."
    assert host.of(sub)[-1]["status"] == "cancelled"
    task_final = [e for e in host.of(run_id, "tool_update") if e["status"] == "failed"]
    assert task_final[-1]["output"] == "cancelled: the sub-agent was cancelled"
