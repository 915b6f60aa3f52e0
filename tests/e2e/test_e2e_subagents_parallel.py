"""Sub-agents side by side over the wire (issue 41, point 2): the daemon as a subprocess over real pipes, three `task`
calls of one model turn. Concurrency is proven without a clock: the host answers no prompt until all three
sub-agents' `agent/permission` requests are open at once, which only three live sub-agents can do (one at a time, the
first would wait forever for its answer and the bounded wait for the other two fails)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kgent_host import KgentHost, check_stream

from helpers import SUB_AGENTS, three_asking_sub_agents


async def test_three_sub_agents_ask_at_once_interleave_and_settle_in_call_order(
    host: KgentHost, workspace: Path
) -> None:
    script = three_asking_sub_agents(workspace.parent / "three.json", "All three are done.")
    held: dict[str, asyncio.Future[dict[str, Any]]] = {}  # requestId → the answer the test gives

    async def wait_answer(params: dict[str, Any]) -> dict[str, Any]:
        answer = held[params["requestId"]] = asyncio.get_running_loop().create_future()
        return await answer

    host.policy = wait_answer
    run_id, _ = await host.start_run(prompt="three jobs", workspace=str(workspace), model=script, mode="ask")
    await host.wait_for(lambda: len(held) == 3, what="three permission requests open at once")
    asked = list(host.permission_requests)
    assert not any(f.done() for f in held.values())  # none answered: all three open together

    # each prompt comes from its own sub-run, names its parent and its agent
    starts = {
        rid: params[0]["event"]
        for rid, params in host.events.items()
        if params and params[0].get("parentRunId") == run_id
    }
    by_agent = {start["agent"]: rid for rid, start in starts.items()}
    assert sorted(by_agent) == sorted(SUB_AGENTS)
    assert sorted(a["agent"] for a in asked) == sorted(SUB_AGENTS)
    for a in asked:
        assert a["parentRunId"] == run_id and a["runId"] == by_agent[a["agent"]]
        assert a["toolCall"]["command"] == f"python3 -c 'print(\"{a['agent']}\")'"
    # the second sub-agent's (the `task` call t1's) approval says it comes from it
    task_calls = {e["toolCallId"]: e for e in host.of(run_id, "tool_call")}
    assert list(task_calls) == ["t0", "t1", "t2"]
    second = next(rid for rid, start in starts.items() if start["parentToolCallId"] == "t1")
    [beta] = [a for a in asked if a["runId"] == second]
    assert beta["agent"] == "Beta" == task_calls["t1"]["args"]["description"]
    # its permission_request event (on its own sub-run's stream) says so too
    [beta_event] = host.of(second, "permission_request")
    assert beta_event["agent"] == "Beta" and beta_event["requestId"] == beta["requestId"]

    # each answer settles its own sub-agent: Gamma's first, and it runs to its end while the other two still wait
    # (no clock: they are held until answered), so the sub-runs' events interleave on the wire — Alpha's prompt came
    # before Gamma's run_end, and the rest of Alpha's run comes after it
    def answer(name: str) -> None:
        [a] = [a for a in asked if a["agent"] == name]
        held[a["requestId"]].set_result({"outcome": "selected", "optionId": "allow_once"})

    answer("Gamma")
    gamma_end = await host.wait_end(by_agent["Gamma"])
    assert gamma_end["status"] == "settled" and gamma_end["text"] == "Gamma is done."
    assert not any(held[a["requestId"]].done() for a in asked if a["agent"] != "Gamma")
    assert not host.of(by_agent["Alpha"], "run_end") and not host.of(by_agent["Beta"], "run_end")
    gamma_ended_at = host.wire.index(("event", by_agent["Gamma"], host.events[by_agent["Gamma"]][-1]["seq"]))
    answer("Alpha")
    answer("Beta")
    end = await host.wait_end(run_id)
    assert end["status"] == "settled" and end["text"] == "All three are done."
    check_stream(host, run_id)
    alpha_wire = [i for i, w in enumerate(host.wire) if w[:2] == ("event", by_agent["Alpha"])]
    assert alpha_wire[0] < gamma_ended_at < alpha_wire[-1]  # interleaved
    for rid, start in starts.items():
        check_stream(host, rid)
        [resolved] = host.of(rid, "permission_resolved")
        assert (resolved["decision"], resolved["source"]) == ("allow_once", "host")
        [ran] = [e for e in host.of(rid, "tool_update") if e["status"] == "completed"]
        assert ran["output"].splitlines()[0] == start["agent"]  # its own command ran
        assert host.of(rid)[-1]["status"] == "settled"
    # the task calls' results, in call order, each its own sub-agent's answer
    finals = [e for e in host.of(run_id, "tool_update") if e["status"] == "completed"]
    by_call = {e["toolCallId"]: e for e in finals}
    assert [by_call[t]["output"] for t in ("t0", "t1", "t2")] == [f"{n} is done." for n in SUB_AGENTS]
    assert [by_call[t]["details"]["runId"] for t in ("t0", "t1", "t2")] == [
        next(rid for rid, s in starts.items() if s["parentToolCallId"] == t) for t in ("t0", "t1", "t2")
    ]
    # the parent's branch of the session keeps the results in the model's call order
    session = await host.call("agent/session", {"sessionId": end["sessionId"], "branchOnly": True})
    results = [
        (e["message"]["toolCallId"], e["message"]["content"])
        for e in session["entries"]
        if e["type"] == "message" and e["message"]["role"] == "tool"
    ]
    assert results == [(f"t{i}", f"{n} is done.") for i, n in enumerate(SUB_AGENTS)], results
