"""HTTP front benchmark: `kgent serve --http` (a real subprocess, scripted provider) as SSE clients see it.

1. Events/s to one SSE client: a scripted answer streamed as N deltas, read by one httpx client — live (while the run
   produces them) and replayed from memory after the run ended (the SSE path alone).
2. 100 SSE clients on one run: every client receives every event (checked), and the server's RSS before/after.
3. POST → first event: POST /api/runs, then open the run's stream; time until its first event arrives (median).

    .venv/bin/python bench/http_sse.py [--events 100000] [--clients 100] [--repeats 21]

Writes bench/results/http_sse.json. (Not bench/http.py: a script there would shadow the stdlib `http` package.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from record import record

from kgent.testing.http_server import HttpServer, start

RESULTS = Path(__file__).parent / "results" / "http_sse.json"
GOALS = {"events_per_s": 50_000}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def count_stream(client: httpx.Client, path: str) -> tuple[int, float, float]:
    """(events, seconds from the first byte to the end, seconds from the request to the end)."""
    events = 0
    asked = time.perf_counter()
    first = None
    tail = b"\n"  # the stream's first message starts with "id: " too
    with client.stream("GET", path) as res:
        res.raise_for_status()
        for chunk in res.iter_raw():
            if first is None:
                first = time.perf_counter()
            data = tail + chunk
            events += data.count(b"\nid: ")
            tail = data[-4:]  # too short to hold a whole match: none is counted twice
    end = time.perf_counter()
    return events, end - (first or asked), end - asked


def start_run(client: httpx.Client, srv: HttpServer, model: str) -> str:
    res = client.post(
        "/api/runs", json={"prompt": "go", "model": model, "mode": "full", "workspace": str(srv.workspace)}
    )
    res.raise_for_status()
    run_id: str = res.json()["runId"]
    return run_id


def bench_one_client(srv: HttpServer, tmp: Path, n: int) -> dict[str, Any]:
    script = tmp / "many.json"
    script.write_text(json.dumps([[{"text": "x " * n, "chunks": n}]]))
    with srv.client() as client:
        run_id = start_run(client, srv, str(script))
        live_events, live_s, _ = count_stream(client, f"/api/runs/{run_id}/events")
        replays = [count_stream(client, f"/api/runs/{run_id}/events") for _ in range(3)]
    replay_events, replay_s = replays[0][0], min(r[1] for r in replays)
    return {
        "events": live_events,
        "live_events_per_s": round(live_events / live_s),
        "replay_events": replay_events,
        "replay_events_per_s": round(replay_events / replay_s),
    }


async def bench_many_clients(srv: HttpServer, tmp: Path, clients: int) -> dict[str, Any]:
    turn: list[dict[str, Any]] = []
    for i in range(200):
        turn += [{"text": f"piece {i} " * 5}, {"sleep": 0.005}]
    script = tmp / "paced.json"
    script.write_text(json.dumps([turn]))
    before = rss_mb(srv.proc.pid)
    limits = httpx.Limits(max_connections=clients + 10, max_keepalive_connections=clients + 10)
    async with httpx.AsyncClient(base_url=srv.url, headers=srv.headers, timeout=120, limits=limits) as client:
        res = await client.post(
            "/api/runs",
            json={"prompt": "go", "model": str(script), "mode": "full", "workspace": str(srv.workspace)},
        )
        run_id = res.json()["runId"]
        peak = [before]

        async def reader() -> list[int]:
            seqs = []
            async with client.stream("GET", f"/api/runs/{run_id}/events") as stream:
                async for line in stream.aiter_lines():
                    if line.startswith("id: "):
                        seqs.append(int(line[4:]))
            return seqs

        async def sample() -> None:
            while True:
                peak[0] = max(peak[0], rss_mb(srv.proc.pid))
                await asyncio.sleep(0.05)

        sampler = asyncio.create_task(sample())
        started = time.perf_counter()
        results = await asyncio.gather(*(reader() for _ in range(clients)))
        elapsed = time.perf_counter() - started
        sampler.cancel()
    n = len(results[0])
    complete = all(r == list(range(n)) for r in results)
    return {
        "clients": clients,
        "events_per_client": n,
        "all_received_everything": complete,
        "seconds": round(elapsed, 2),
        "rss_mb_before": before,
        "rss_mb_peak": peak[0],
        "rss_mb_after": rss_mb(srv.proc.pid),
    }


def bench_first_event(srv: HttpServer, repeats: int) -> dict[str, Any]:
    times = []
    with srv.client() as client:
        for _ in range(repeats):
            asked = time.perf_counter()
            run_id = start_run(client, srv, "hello")
            with client.stream("GET", f"/api/runs/{run_id}/events") as res:
                for line in res.iter_lines():
                    if line.startswith("data:"):
                        times.append((time.perf_counter() - asked) * 1000)
                        break
    return {
        "repeats": repeats,
        "median_ms": round(statistics.median(times), 2),
        "min_ms": round(min(times), 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        ws = tmp / "ws"
        ws.mkdir()
        srv = start(ws, tmp / "state")
        try:
            one = bench_one_client(srv, tmp, args.events)
            many = asyncio.run(bench_many_clients(srv, tmp, args.clients))
            first = bench_first_event(srv, args.repeats)
        finally:
            srv.stop()
    print(
        f"one SSE client: {one['events']} events live at {one['live_events_per_s']:,}/s; replayed from memory at "
        f"{one['replay_events_per_s']:,}/s   (goal ≥ {GOALS['events_per_s']:,}/s)"
    )
    print(
        f"{many['clients']} SSE clients on one run: {many['events_per_client']} events each, all received "
        f"everything: {many['all_received_everything']}, {many['seconds']} s; server RSS {many['rss_mb_before']} → "
        f"peak {many['rss_mb_peak']} MB (after {many['rss_mb_after']} MB)"
    )
    print(
        f"POST → first event: median {first['median_ms']} ms (min {first['min_ms']}) over {first['repeats']} runs"
    )
    record(
        RESULTS,
        {
            "goals": GOALS,
            "one_client": one,
            "many_clients": many,
            "first_event": first,
        },
    )
    return 0 if many["all_received_everything"] and one["events"] == one["replay_events"] else 1


if __name__ == "__main__":
    sys.exit(main())
