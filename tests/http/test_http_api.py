"""The HTTP front's routes against a real `kgent serve --http`: protocol.md's methods one to one, the token, the
limits, approvals answered by any client (first answer wins), and the workspace allowlist."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from conftest import run
from helpers import conforms
from kgent.service.handshake import PROTOCOL_VERSION, Settings, initialize_result
from kgent.service.wire.events import AgentEventParams, PermissionParams
from kgent.service.wire.files import ApplyReviewResult, ReviewResult
from kgent.session.jsonl import JsonlSessionStore
from kgent.testing.http_server import HttpServer, read_events, sse_events, start


def wait_permission(client: httpx.Client, run_id: str) -> dict[str, object]:
    """The run's first open approval (its stream up to the permission_request, then the list of open ones)."""
    with client.stream("GET", f"/api/runs/{run_id}/events") as res:
        for _, params, _ in sse_events(res.iter_lines()):
            if params is not None and params["event"]["type"] == "permission_request":
                break
    listed = client.get("/api/permissions", params={"runId": run_id}).json()["permissions"]
    assert len(listed) == 1
    conforms(PermissionParams, listed[0])
    return dict(listed[0])


def test_health_is_public_and_the_api_needs_the_token(server: HttpServer) -> None:
    with httpx.Client(base_url=server.url) as anon:
        assert anon.get("/health").json() == {"status": "ok"}
        for path in ("/api/info", "/api/permissions", "/api/runs/x/events", "/openapi.json"):
            res = anon.get(path)
            assert res.status_code == 401, path
            assert res.json()["error"]["data"]["code"] == "unauthorised"
        assert anon.get("/api/info", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert anon.post("/api/runs", json={"prompt": "x"}).status_code == 401
        assert anon.get("/").status_code == 200  # the page carries no data: it asks for the token


def test_info_is_initialize_and_openapi_lists_the_routes(client: httpx.Client) -> None:
    info = client.get("/api/info").json()
    expected = initialize_result(PROTOCOL_VERSION, Settings(), {"KGENT_PROVIDER": "scripted"})
    assert info["serverInfo"] == expected["serverInfo"]
    assert info["capabilities"]["modes"] == expected["capabilities"]["modes"]
    assert info["capabilities"]["defaultProvider"] == "scripted"
    paths = client.get("/openapi.json").json()["paths"]
    for path in (
        "/api/runs",
        "/api/runs/{run_id}/cancel",
        "/api/runs/{run_id}/steer",
        "/api/runs/{run_id}/followUp",
        "/api/runs/{run_id}/clearQueue",
        "/api/runs/{run_id}/events",
        "/api/permissions",
        "/api/permissions/{request_id}",
        "/api/sessions",
        "/api/sessions/{session_id}",
        "/api/sessions/{session_id}/fork",
        "/api/sessions/{session_id}/compact",
        "/api/sessions/{session_id}/review",
        "/api/sessions/{session_id}/events",
    ):
        assert path in paths, path
    schema = paths["/api/runs"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert schema["$ref"].endswith("/RunParams")


def test_a_run_with_an_approval(client: httpx.Client, server: HttpServer) -> None:
    started = run(client, "read-then-write")
    permission = wait_permission(client, started["runId"])
    assert permission["toolCall"]["diff"].endswith("+rewritten\n")  # type: ignore[index]
    rid = str(permission["requestId"])
    res = client.post(f"/api/permissions/{rid}", json={"outcome": "selected", "optionId": "allow_once"})
    assert res.status_code == 200 and res.json() == {}
    again = client.post(f"/api/permissions/{rid}", json={"outcome": "selected", "optionId": "reject_once"})
    assert again.status_code == 409 and again.json()["error"]["data"]["code"] == "permission_closed"
    events = [p for _, p in read_events(client, f"/api/runs/{started['runId']}/events")]
    for params in events:
        conforms(AgentEventParams, params)
    assert [p["seq"] for p in events] == list(range(len(events)))
    end = events[-1]["event"]
    assert end["type"] == "run_end" and end["status"] == "settled" and end["changedPaths"] == ["notes.txt"]
    resolved = [p["event"] for p in events if p["event"]["type"] == "permission_resolved"]
    assert resolved[0]["source"] == "host" and resolved[0]["approved"] is True
    assert (server.workspace / "notes.txt").read_text() == "rewritten\n"
    info = client.get(f"/api/runs/{started['runId']}").json()
    assert info["live"] is False and info["events"] == len(events) and info["baseEntryId"] is None


async def test_the_first_of_two_answers_wins(server: HttpServer) -> None:
    (server.workspace / "notes.txt").write_text("hello\n")
    with server.client() as client:
        started = run(client, "read-then-write")
        rid = str(wait_permission(client, started["runId"])["requestId"])
    async with server.async_client() as a, server.async_client() as b:
        answers = await asyncio.gather(
            a.post(f"/api/permissions/{rid}", json={"outcome": "selected", "optionId": "reject_once"}),
            b.post(f"/api/permissions/{rid}", json={"outcome": "selected", "optionId": "allow_once"}),
        )
    assert sorted(r.status_code for r in answers) == [200, 409]
    with server.client() as client:
        events = [p["event"] for _, p in read_events(client, f"/api/runs/{started['runId']}/events")]
    winner = next(r for r in answers if r.status_code == 200)
    approved = winner.request.content.find(b"allow_once") >= 0
    assert [e["approved"] for e in events if e["type"] == "permission_resolved"] == [approved]


def test_an_option_that_was_not_offered_rejects_as_on_every_front(client: httpx.Client) -> None:
    started = run(client, "read-then-write")
    rid = str(wait_permission(client, started["runId"])["requestId"])
    answer = client.post(f"/api/permissions/{rid}", json={"outcome": "selected", "optionId": "yes please"})
    assert answer.status_code == 200 and client.get("/api/permissions").json()["permissions"] == []
    events = [p["event"] for _, p in read_events(client, f"/api/runs/{started['runId']}/events")]
    [resolved] = [e for e in events if e["type"] == "permission_resolved"]
    assert resolved["approved"] is False and resolved["decision"] == "reject_once"


def test_bad_answers_keep_the_prompt_open(client: httpx.Client) -> None:
    started = run(client, "read-then-write")
    rid = str(wait_permission(client, started["runId"])["requestId"])
    assert client.post("/api/permissions/nope", json={"outcome": "cancelled"}).status_code == 404
    assert client.post(f"/api/permissions/{rid}", json={"outcome": "maybe"}).status_code == 400
    assert client.get("/api/permissions").json()["permissions"][0]["requestId"] == rid  # still open
    assert client.post(f"/api/runs/{started['runId']}/cancel").json() == {"cancelled": True}
    assert client.get("/api/permissions").json()["permissions"] == []
    late = client.post(f"/api/permissions/{rid}", json={"outcome": "selected", "optionId": "allow_once"})
    assert late.status_code == 409  # withdrawn by the cancel
    events = [p["event"] for _, p in read_events(client, f"/api/runs/{started['runId']}/events")]
    assert events[-1]["status"] == "cancelled"
    assert client.post(f"/api/runs/{started['runId']}/cancel").json() == {"cancelled": False}


def test_steer_follow_up_and_errors_over_http(client: httpx.Client) -> None:
    started = run(client, "read-then-write")
    wait_permission(client, started["runId"])
    assert client.post(f"/api/runs/{started['runId']}/followUp", json={"text": "then stop"}).json() == {}
    assert client.post(f"/api/runs/{started['runId']}/steer", json={"text": "be brief"}).json() == {}
    blank = client.post(f"/api/runs/{started['runId']}/steer", json={"text": "  "})
    assert blank.status_code == 400
    busy = client.post(
        "/api/runs", json={"prompt": "again", "sessionId": started["sessionId"], "model": "hello"}
    )
    assert busy.status_code == 409 and busy.json()["error"]["data"] == {
        "code": "session_busy",
        "runId": started["runId"],
    }
    client.post(f"/api/runs/{started['runId']}/cancel")
    read_events(client, f"/api/runs/{started['runId']}/events")
    ended = client.post(f"/api/runs/{started['runId']}/steer", json={"text": "late"})
    assert ended.status_code == 409 and ended.json()["error"]["data"]["code"] == "run_not_live"
    assert client.post("/api/runs/run-nope/cancel").status_code == 404
    assert client.get("/api/runs/run-nope/events").status_code == 404
    # the same validation (and message) as the stdio daemon's
    empty = client.post("/api/runs", json={"prompt": "", "workspace": "/tmp"})
    assert empty.status_code == 400
    assert empty.json()["error"] == {
        "code": -32602,
        "message": "invalid params: 'prompt' must not be blank",
        "data": {"code": "invalid_params"},
    }
    relative = client.post("/api/runs", json={"prompt": "x", "workspace": "ws"})
    assert relative.json()["error"]["message"] == "invalid params: 'workspace' must be an absolute path"
    yolo = {"prompt": "x", "mode": "yolo", "workspace": "/tmp"}
    assert client.post("/api/runs", json=yolo).json()["error"]["data"] == {"code": "unknown_permission_mode"}


def test_sessions_list_read_fork(client: httpx.Client, server: HttpServer) -> None:
    first = run(client, "hello", mode="full")
    read_events(client, f"/api/runs/{first['runId']}/events")
    sid = first["sessionId"]
    listed = client.get("/api/sessions", params={"workspace": str(server.workspace)}).json()["sessions"]
    assert sid in [s["sessionId"] for s in listed]
    session = client.get(f"/api/sessions/{sid}").json()
    assert session["liveRunId"] is None and session["branch"][-1] == session["leafId"]
    user = next(e for e in session["entries"] if e["type"] == "message" and e["message"]["role"] == "user")
    forked = client.post(f"/api/sessions/{sid}/fork", json={"entryId": user["parentId"]})
    assert forked.json() == {"sessionId": sid, "leafId": user["parentId"]}
    second = run(client, "hello", prompt="again", sessionId=sid, mode="full")
    assert client.get(f"/api/runs/{second['runId']}").json()["baseEntryId"] == user["parentId"]
    read_events(client, f"/api/runs/{second['runId']}/events")
    branch = client.get(f"/api/sessions/{sid}", params={"branchOnly": "true"}).json()
    texts = [e["message"].get("text") for e in branch["entries"] if e["type"] == "message"]
    assert "go" not in texts and "again" in texts
    assert client.post(f"/api/sessions/{sid}/fork", json={"entryId": "nope"}).status_code == 404
    assert client.get("/api/sessions/nope0000").status_code in (400, 404)
    compacted = client.post(f"/api/sessions/{sid}/compact", json={"instructions": "keep it short"})
    assert compacted.status_code == 200, compacted.text
    assert compacted.json()["compacted"] in (True, False)


def test_workspaces_outside_the_allowlist_are_refused(client: httpx.Client, tmp_path: Path) -> None:
    res = client.post("/api/runs", json={"prompt": "x", "workspace": str(tmp_path), "model": "hello"})
    assert res.status_code == 403 and res.json()["error"]["data"]["code"] == "workspace_not_allowed"
    assert client.get("/api/sessions", params={"workspace": str(tmp_path)}).status_code == 403
    sneaky = client.post("/api/runs", json={"prompt": "x", "workspace": "/", "model": "hello"})
    assert sneaky.status_code == 403


def test_request_bodies_are_limited(client: httpx.Client) -> None:
    huge = b'{"prompt": "' + b"x" * (9 << 20) + b'"}'
    res = client.post("/api/runs/run-0/steer", content=huge, headers={"Content-Type": "application/json"})
    assert res.status_code == 413 and res.json()["error"]["data"]["code"] == "body_too_large"

    def chunks() -> object:
        yield b'{"prompt": "'
        for _ in range(10):
            yield b"y" * (1 << 20)
        yield b'"}'

    streamed = client.post(
        "/api/runs/run-0/steer", content=chunks(), headers={"Content-Type": "application/json"}
    )  # type: ignore[arg-type]
    assert streamed.status_code == 413


def test_cors_is_closed_by_default(client: httpx.Client) -> None:
    res = client.options(
        "/api/info", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"}
    )
    assert "access-control-allow-origin" not in res.headers
    res = client.get("/api/info", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in res.headers


def test_no_answer_means_the_approval_timeout_rejects(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    srv = start(ws.resolve(), tmp_path / "state", env={"KGENT_APPROVAL_TIMEOUT": "0.5"})
    try:
        with srv.client() as client:
            started = run(client, "read-then-write")
            events = [p["event"] for _, p in read_events(client, f"/api/runs/{started['runId']}/events")]
            resolved = [e for e in events if e["type"] == "permission_resolved"]
            assert resolved[0]["source"] == "timeout" and resolved[0]["approved"] is False
            assert client.get("/api/permissions").json()["permissions"] == []
            rid = next(e["requestId"] for e in events if e["type"] == "permission_request")
            late = client.post(
                f"/api/permissions/{rid}", json={"outcome": "selected", "optionId": "allow_once"}
            )
            assert late.status_code == 409
        assert (ws / "notes.txt").read_text() == "hello\n"
    finally:
        assert srv.stop() == 0


def _serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgent", "serve", "--http", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )


def test_a_network_bind_needs_tls_or_insecure(tmp_path: Path) -> None:
    refused = _serve("--host", "0.0.0.0", "--port", "0", "--workspace-root", str(tmp_path))
    assert refused.returncode == 2
    assert "without TLS" in refused.stderr and "--insecure" in refused.stderr
    half = _serve("--port", "0", env={"KGENT_SSL_KEYFILE": str(tmp_path / "k.pem")})
    assert half.returncode == 2 and "KGENT_SSL_CERTFILE" in half.stderr
    missing = _serve("--port", "0", "--workspace-root", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr
    both = _serve("--stdio", "--port", "0")
    assert both.returncode == 2 and "choose one transport" in both.stderr


@pytest.mark.parametrize("origin", ["http://localhost:5173"])
def test_cors_opens_for_a_configured_origin(tmp_path: Path, origin: str) -> None:
    srv = start(tmp_path, tmp_path / "state", "--cors-origin", origin)
    try:
        with srv.client() as client:
            res = client.options(
                "/api/info",
                headers={
                    "Origin": origin,
                    "Access-Control-Request-Method": "GET",
                    "Access-Control-Request-Headers": "authorization",
                },
            )
            assert res.headers["access-control-allow-origin"] == origin
            other = client.get("/api/info", headers={"Origin": "https://evil.example"})
            assert "access-control-allow-origin" not in other.headers
    finally:
        assert srv.stop() == 0


def test_tls_with_the_seed_environment_variables(tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    srv = start(
        tmp_path, tmp_path / "state", env={"KGENT_SSL_KEYFILE": str(key), "KGENT_SSL_CERTFILE": str(cert)}
    )
    try:
        assert srv.url.startswith("https://127.0.0.1:")
        with httpx.Client(base_url=srv.url, verify=False) as anon:
            assert anon.get("/health").json() == {"status": "ok"}
            assert anon.get("/api/info").status_code == 401
    finally:
        assert srv.stop() == 0


def test_the_listening_socket_gets_tcp_nodelay_on_its_connections() -> None:
    import socket

    from kgent.http.serve import bind

    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP  # asyncio sets TCP_NODELAY only on such sockets' connections
    finally:
        sock.close()


def test_clear_queue_drops_the_queued_messages(client: httpx.Client) -> None:
    started = run(client, "read-then-write")
    rid = str(wait_permission(client, started["runId"])["requestId"])
    base = f"/api/runs/{started['runId']}"
    assert client.post(f"{base}/steer", json={"text": "use value 3"}).json() == {}
    assert client.post(f"{base}/followUp", json={"text": "then add a test"}).json() == {}
    cleared = client.post(f"{base}/clearQueue")  # no body
    assert cleared.status_code == 200 and cleared.json() == {}
    assert client.post(f"{base}/clearQueue", json={}).json() == {}  # or an empty one
    client.post(f"/api/permissions/{rid}", json={"outcome": "selected", "optionId": "allow_once"})
    events = [p["event"] for _, p in read_events(client, f"{base}/events")]
    assert [e["source"] for e in events if e["type"] == "user_message"] == ["prompt"]
    queues = [e for e in events if e["type"] == "queue_update"]
    assert queues[-1] == {"type": "queue_update", "steering": [], "followUp": []}
    assert events[-1]["type"] == "run_end" and events[-1]["status"] == "settled"
    ended = client.post(f"{base}/clearQueue")
    assert ended.status_code == 409 and ended.json()["error"]["data"]["code"] == "run_not_live"
    unknown = client.post("/api/runs/run-nope/clearQueue")
    assert unknown.status_code == 404 and unknown.json()["error"]["data"]["code"] == "run_not_found"
    assert client.post(f"{base}/clearQueue", json=[1]).status_code == 400


A = "alpha\nbeta\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\n"
B = "alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\njuliet\n"


def test_review_and_apply_review(client: httpx.Client, server: HttpServer) -> None:
    (server.workspace / "a.txt").write_text(A)
    (server.workspace / "b.txt").write_text(B)
    started = run(client, "review-edits", prompt="edit", mode="full")
    end = read_events(client, f"/api/runs/{started['runId']}/events")[-1][1]["event"]
    assert end["status"] == "settled" and end["changedPaths"] == ["a.txt", "b.txt"]
    sid, path = started["sessionId"], f"/api/sessions/{started['sessionId']}/review"

    res = client.get(path, params={"runId": started["runId"]})
    assert res.status_code == 200, res.text
    review = res.json()
    conforms(ReviewResult, review)
    assert review["sessionId"] == sid and [r["runId"] for r in review["runs"]] == [started["runId"]]
    hunks = {f"{f['path']}:{h['newText'].strip()}": h for f in review["runs"][0]["files"] for h in f["hunks"]}
    assert sorted(hunks) == ["a.txt:BETA", "a.txt:HOTEL", "b.txt:CHARLIE", "b.txt:INDIA"]
    assert all(h["status"] == "pending" for h in hunks.values())
    assert client.get(path).json() == review  # the whole session: its one run
    assert client.get(path, params={"runId": "run-other"}).json()["runs"] == []

    keep = [hunks[k]["id"] for k in ("a.txt:BETA", "b.txt:CHARLIE", "b.txt:INDIA")]
    drop = hunks["a.txt:HOTEL"]["id"]
    res = client.post(path, json={"accept": keep, "reject": [drop]})
    assert res.status_code == 200, res.text
    conforms(ApplyReviewResult, res.json())
    assert [(r["hunkId"], r["outcome"]) for r in res.json()["results"]] == [
        *((k, "accepted") for k in keep),
        (drop, "rejected"),
    ]
    assert res.json()["told"] == "next_prompt"
    assert (server.workspace / "a.txt").read_text() == A.replace("beta", "BETA")
    statuses = {
        h["id"]: h["status"] for r in client.get(path).json()["runs"] for f in r["files"] for h in f["hunks"]
    }
    assert statuses == {**dict.fromkeys(keep, "accepted"), drop: "rejected"}
    again = client.post(path, json={"reject": [drop]}).json()["results"]
    assert [r["outcome"] for r in again] == ["already_rejected"]

    # errors as the other routes: the daemon's messages, HTTP statuses
    both = client.post(path, json={"accept": [drop], "reject": [drop]})
    assert both.status_code == 400 and both.json()["error"] == {
        "code": -32602,
        "message": f"invalid params: params a hunk cannot be both accepted and rejected: {drop}",
        "data": {"code": "invalid_params"},
    }
    typed = client.post(path, json={"accept": "all"})
    assert typed.status_code == 400 and typed.json()["error"]["message"].startswith(
        "invalid params: 'accept'"
    )
    assert client.post(path, content=b"{", headers={"Content-Type": "application/json"}).status_code == 400
    missing = client.get("/api/sessions/0123456789ab/review")
    assert missing.status_code == 404 and missing.json()["error"]["data"]["code"] == "session_not_found"
    assert client.post("/api/sessions/0123456789ab/review", json={"reject": [drop]}).status_code == 404


async def test_review_is_refused_outside_the_allowed_workspaces(server: HttpServer, tmp_path: Path) -> None:
    store = JsonlSessionStore(server.workspace.parent / "state" / "sessions")  # the server's own
    outside = await store.create(workspace=str(tmp_path))
    await store.aclose()
    async with server.async_client() as client:
        for res in (
            await client.get(f"/api/sessions/{outside.id}/review"),
            await client.post(f"/api/sessions/{outside.id}/review", json={"reject": [f"{outside.id}.1"]}),
        ):
            assert res.status_code == 403 and res.json()["error"]["data"]["code"] == "workspace_not_allowed"


def test_rename_and_delete_a_session(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    srv = start(ws.resolve(), tmp_path / "state")
    try:
        with srv.client() as client:
            kept, gone = (run(client, "hello", prompt=p, mode="full") for p in ("Keep me", "Delete me"))
            for started in (kept, gone):
                read_events(client, f"/api/runs/{started['runId']}/events")
            sid = gone["sessionId"]

            def listed() -> dict[str, str]:
                res = client.get("/api/sessions", params={"workspace": str(ws.resolve())})
                return {s["sessionId"]: s["title"] for s in res.json()["sessions"]}

            assert client.patch(f"/api/sessions/{sid}", json={"title": "Renamed"}).json() == {}
            assert listed() == {kept["sessionId"]: "Keep me", sid: "Renamed"}
            too_long = client.patch(f"/api/sessions/{sid}", json={"title": "x" * 201})
            assert (
                too_long.status_code == 400 and too_long.json()["error"]["data"]["code"] == "invalid_params"
            )
            assert client.patch("/api/sessions/nope0000", json={"title": "x"}).status_code == 404
            assert client.patch(f"/api/sessions/{sid}", json={"title": ""}).json() == {}
            assert listed()[sid] == "Delete me"

            live = run(client, "read-then-write", sessionId=kept["sessionId"])
            wait_permission(client, live["runId"])
            busy = client.delete(f"/api/sessions/{kept['sessionId']}")
            assert busy.status_code == 409 and busy.json()["error"]["data"]["code"] == "session_busy"
            client.post(f"/api/runs/{live['runId']}/cancel")
            read_events(client, f"/api/runs/{live['runId']}/events")

            assert client.delete(f"/api/sessions/{sid}").json() == {}
            assert listed() == {kept["sessionId"]: "Keep me"}
            assert client.get(f"/api/sessions/{sid}").status_code == 404
            again = client.delete(f"/api/sessions/{sid}")
            assert again.status_code == 404 and again.json()["error"]["data"]["code"] == "session_not_found"
    finally:
        assert srv.stop() == 0, "".join(srv.output)
    archive = tmp_path / "state" / "http-runs"
    assert (archive / f"{kept['runId']}.jsonl").is_file()  # archived at the latest on the way out …
    assert not (archive / f"{gone['runId']}.jsonl").exists()  # … but not the deleted session's run
    assert not list((tmp_path / "state").rglob(f"{sid}.jsonl"))
