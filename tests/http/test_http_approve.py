"""Approve with changes over HTTP (a real `kgent serve --http`): POST /api/permissions/{requestId} with newText writes
the user's version; a newText the answer may not carry is a 400 and the approval stays open."""

from __future__ import annotations

import httpx

from conftest import run
from kgent.testing.http_server import HttpServer, read_events, sse_events


def first_permission(client: httpx.Client, run_id: str) -> dict[str, object]:
    with client.stream("GET", f"/api/runs/{run_id}/events") as res:
        for _, params, _ in sse_events(res.iter_lines()):
            if params is not None and params["event"]["type"] == "permission_request":
                break
    [listed] = client.get("/api/permissions", params={"runId": run_id}).json()["permissions"]
    return dict(listed)


def test_new_text_over_http(client: httpx.Client, server: HttpServer) -> None:
    assert client.get("/api/info").json()["capabilities"]["permissionNewText"] is True
    started = run(client, "read-then-write")
    permission = first_permission(client, started["runId"])
    rid = str(permission["requestId"])
    assert permission["toolCall"]["newText"] == "rewritten\n"  # type: ignore[index]
    mine = "rewritten by me\n"
    refused = client.post(
        f"/api/permissions/{rid}", json={"outcome": "selected", "optionId": "reject_once", "newText": mine}
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] == -32602 and "allow option" in refused.json()["error"]["message"]
    assert [p["requestId"] for p in client.get("/api/permissions").json()["permissions"]] == [
        rid
    ]  # still open
    res = client.post(
        f"/api/permissions/{rid}", json={"outcome": "selected", "optionId": "allow_once", "newText": mine}
    )
    assert res.status_code == 200, res.text
    events = [p["event"] for _, p in read_events(client, f"/api/runs/{started['runId']}/events")]
    assert events[-1]["type"] == "run_end" and events[-1]["status"] == "settled"
    [resolved] = [e for e in events if e["type"] == "permission_resolved"]
    assert resolved["edited"] is True
    assert (server.workspace / "notes.txt").read_text() == mine
    [done] = [
        e
        for e in events
        if e["type"] == "tool_update" and e["status"] == "completed" and e["details"].get("userEdited")
    ]
    assert "-rewritten\n+rewritten by me\n" in done["output"]
