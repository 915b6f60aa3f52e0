"""Seed 000's headless mode over HTTP: a `risk_based` run ends without anyone answering; its medium-risk command
runs (inside the sandbox), its high-risk command is denied with a `permission_denied` result."""

from __future__ import annotations

import httpx

from kgent.sandbox.bwrap import detect
from kgent.testing.http_server import HttpServer, read_events


def test_a_risk_based_run_finishes_unanswered(client: httpx.Client, server: HttpServer) -> None:
    workspace = str(client.get("/api/workspaces").json()["roots"][0])
    body = {"prompt": "go", "model": "risk-based", "mode": "risk_based", "workspace": workspace}
    res = client.post("/api/runs", json=body)
    assert res.status_code == 200, res.text
    started = res.json()
    events = [p["event"] for _, p in read_events(client, f"/api/runs/{started['runId']}/events")]
    assert events[0]["mode"] == "risk_based"
    assert not [e for e in events if e["type"] == "permission_request"]  # nobody is ever asked
    results = {
        e["toolCallId"]: e
        for e in events
        if e["type"] == "tool_update" and e["status"] in ("completed", "failed")
    }
    calls = [e for e in events if e["type"] == "tool_call"]
    read, create, code = (results[c["toolCallId"]] for c in calls)
    assert not read["isError"]
    denied = [e for e in events if e["type"] == "permission_resolved"]
    if detect().contains:  # the medium command ran, in the sandbox with the workspace writable
        assert not create["isError"], create
        assert "stamp" in create["output"]
        assert (server.workspace / "build" / "stamp").is_file()
        assert [d["toolCallId"] for d in denied] == [calls[2]["toolCallId"]]
    else:  # no sandbox: risk_based runs no command at all
        assert create["isError"] and "no sandbox" in create["output"]
        assert not (server.workspace / "build").exists()
    assert code["isError"] and code["output"].startswith("permission_denied: ")
    assert "risk_based mode denies high-risk calls" in code["output"]
    assert not (server.workspace / "build" / "out.txt").exists()
    end = events[-1]
    assert end["type"] == "run_end" and end["status"] == "settled"
