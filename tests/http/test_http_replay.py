"""SSE replay: a reader that disconnects at any point and reconnects with Last-Event-ID (or ?fromSeq=) gets exactly
what it missed — nothing lost, nothing twice — from a live run and from an ended one; many readers of one run all
get everything; session streams follow run after run; heartbeats keep idle streams open."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from conftest import run
from kgent.testing.http_server import HttpServer, read_events, sse_events, start, write_script

WORDS = " ".join(f"w{i}" for i in range(120))


def paced_script(directory: Path, name: str, steps: int = 40) -> str:
    """A run that stays live for a while: `steps` text pieces with a short sleep between them, a tool call, more."""
    turn: list[dict[str, Any]] = []
    for i in range(steps):
        turn += [{"text": f"part {i} "}, {"sleep": 0.02}]
    turn.append({"tool": "read", "args": {"path": "sample.py"}})
    return write_script(directory, name, [turn, [{"text": WORDS}]])


def full_stream(client: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    events = [p for _, p in read_events(client, f"/api/runs/{run_id}/events")]
    assert [p["seq"] for p in events] == list(range(len(events)))
    assert events[-1]["event"]["type"] == "run_end"
    return events


def test_an_ended_run_replays_from_every_point(client: httpx.Client, tmp_path: Path) -> None:
    model = write_script(
        tmp_path,
        "words",
        [[{"text": WORDS}, {"tool": "read", "args": {"path": "sample.py"}}], [{"text": WORDS}]],
    )
    started = run(client, model, mode="full")
    events = full_stream(client, started["runId"])
    assert len(events) > 240
    path = f"/api/runs/{started['runId']}/events"
    for last in range(-1, len(events)):
        got = read_events(client, path, last_event_id=str(last)) if last >= 0 else read_events(client, path)
        assert [p for _, p in got] == events[last + 1 :], last
        assert [i for i, _ in got] == [str(p["seq"]) for p in events[last + 1 :]]
    assert [p for _, p in read_events(client, f"{path}?fromSeq=7")] == events[7:]
    assert read_events(client, f"{path}?fromSeq={len(events) + 5}") == []
    bad = client.get(path, headers={"Last-Event-ID": "not-a-seq"})
    assert bad.status_code == 400


def test_a_live_run_read_in_pieces_with_reconnects(client: httpx.Client, tmp_path: Path) -> None:
    """Disconnect after 1, 2, 3, … events, reconnect with the last id each time, while the run is still going."""
    started = run(client, paced_script(tmp_path, "paced"), mode="full")
    path = f"/api/runs/{started['runId']}/events"
    got: list[tuple[str, dict[str, Any]]] = []
    last: str | None = None
    piece = 1
    live_reconnects = 0
    while not got or got[-1][1]["event"]["type"] != "run_end":
        batch = read_events(client, path, last_event_id=last, limit=piece)
        assert batch, "a reconnect before the end got nothing"
        got += batch
        last = batch[-1][0]
        if (
            batch[-1][1]["event"]["type"] != "run_end"
            and client.get(f"/api/runs/{started['runId']}").json()["live"]
        ):
            live_reconnects += 1
        piece = piece % 4 + 1
    assert live_reconnects >= 5  # the reconnects happened while the run was live
    events = full_stream(client, started["runId"])
    assert [p for _, p in got] == events


async def test_many_readers_of_one_run_all_get_everything(server: HttpServer, tmp_path: Path) -> None:
    (server.workspace / "sample.py").write_text("value = 1\n")
    async with server.async_client() as client:
        res = await client.post(
            "/api/runs",
            json={
                "prompt": "go",
                "model": paced_script(tmp_path, "many"),
                "mode": "full",
                "workspace": str(server.workspace),
            },
        )
        run_id = res.json()["runId"]

        async def reader(offset: int) -> list[dict[str, Any]]:
            await asyncio.sleep(offset * 0.01)  # they join at different points; each replays from seq 0
            out = []
            async with client.stream("GET", f"/api/runs/{run_id}/events") as stream:
                lines = [line async for line in stream.aiter_lines()]
            for _, params, _ in sse_events(iter(lines)):
                if params is not None:
                    out.append(params)
            return out

        results = await asyncio.gather(*(reader(i) for i in range(20)))
    with server.client() as c:
        events = full_stream(c, run_id)
    for got in results:
        assert got == events


def test_the_session_stream_follows_run_after_run(client: httpx.Client, server: HttpServer) -> None:
    first = run(client, "hello", mode="full")
    sid = first["sessionId"]
    one = full_stream(client, first["runId"])
    path = f"/api/sessions/{sid}/events"
    with client.stream("GET", path, params={"runId": first["runId"]}) as res:
        seen: list[tuple[str, dict[str, Any]]] = []
        second: dict[str, str] | None = None
        for event_id, params, _ in sse_events(res.iter_lines()):
            if params is None:
                continue
            seen.append((event_id or "", params))
            if params["event"]["type"] == "run_end":
                if second is None:  # the first run is over: start the next one; the stream carries on with it
                    second = run(client, "hello", prompt="again", sessionId=sid, mode="full")
                else:
                    break
    assert second is not None
    two = full_stream(client, second["runId"])
    assert [p for _, p in seen] == one + two
    assert [i for i, _ in seen] == [f"{p['runId']}:{p['seq']}" for p in one + two]
    # resume the session stream in the middle of the first run: the rest of it, then all of the second
    middle = f"{first['runId']}:{len(one) // 2}"
    with client.stream("GET", path, headers={"Last-Event-ID": middle}) as res:
        rest = []
        for _, params, _ in sse_events(res.iter_lines()):
            if params is not None:
                rest.append(params)
                if params["runId"] == second["runId"] and params["event"]["type"] == "run_end":
                    break
    assert rest == one[len(one) // 2 + 1 :] + two


def test_idle_streams_get_heartbeats(client: httpx.Client) -> None:
    first = run(client, "hello", mode="full")
    full_stream(client, first["runId"])
    with client.stream("GET", f"/api/sessions/{first['sessionId']}/events") as res:  # no live run: idle
        for _, params, comment in sse_events(res.iter_lines()):
            assert params is None
            if comment is not None and comment.startswith("ping"):
                break


def test_an_ended_run_replays_after_a_restart(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    first = start(ws.resolve(), tmp_path / "state")
    try:
        with first.client() as client:
            started = run(client, "tool-loop", mode="full")
            events = full_stream(client, started["runId"])
    finally:
        assert first.stop() == 0
    archived = tmp_path / "state" / "http-runs" / f"{started['runId']}.jsonl"
    assert archived.stat().st_mode & 0o077 == 0  # private, like the sessions
    again = start(ws.resolve(), tmp_path / "state")
    try:
        with again.client() as client:
            assert client.get(f"/api/runs/{started['runId']}").json()["live"] is False
            path = f"/api/runs/{started['runId']}/events"
            assert [p for _, p in read_events(client, path, last_event_id="3")] == events[4:]
            assert [p for _, p in read_events(client, path)] == events
            assert client.get("/api/runs/run-..%2F..%2Fetc/events").status_code == 404
    finally:
        assert again.stop() == 0
