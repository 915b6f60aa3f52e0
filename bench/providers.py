"""Provider benchmark: the kernel's overhead per model call over real HTTP, against the instant local model
server.

A run of N model calls is N-1 turns that each call `read`, then one answer streamed as 200 deltas. The floor
is the same N requests (the very bodies the kernel sent, replayed) made with raw httpx streaming against the
same server in the same process; overhead per call = (kernel wall - floor wall) / N, each wall the best of
interleaved repeats (medians are recorded too). Peak RSS is that of a `kgent run` subprocess doing the
400-call run.

    .venv/bin/python bench/providers.py [--repeats 7] [--calls 20 100 400] [--wires openai anthropic]

"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from record import record

from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.anthropic import AnthropicProvider
from kgent.providers.base import ProviderConfig
from kgent.providers.openai import OpenAIProvider

RESULTS = Path(__file__).parent / "results" / "providers.json"
GOALS = {"overhead_ms_per_call_at_400": 1.5, "growth_20_to_400": 1.3, "peak_rss_mib": 60}
ANSWER = " ".join(f"w{i}" for i in range(200))


def script(calls: int) -> list[list[dict[str, Any]]]:
    return [[{"tool": "read", "args": {"path": "sample.py"}}]] * (calls - 1) + [
        [{"text": ANSWER, "chunks": 200}]
    ]


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "kgent.testing"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def base_url(url: str, wire: str) -> str:
    return f"{url}/v1" if wire == "openai" else url


async def kernel_run(url: str, wire: str, workspace: Path, calls: int) -> float:
    cls = OpenAIProvider if wire == "openai" else AnthropicProvider
    provider = cls(ProviderConfig(provider=wire, model="bench", base_url=base_url(url, wire)))
    kernel = AgentKernel(provider, config=KernelConfig(mode="full", max_turns=calls + 1))
    started = time.perf_counter()
    run = kernel.create_run("read sample.py repeatedly, then answer", workspace=str(workspace))
    async for _ in run:
        pass
    result = await run.result()
    wall = time.perf_counter() - started
    await kernel.aclose()
    if result.status != "settled" or result.turns != calls:
        raise SystemExit(f"bench run failed: {result.status} after {result.turns} turns: {result.error}")
    return wall


async def floor_run(url: str, requests: list[dict[str, Any]]) -> float:
    async with httpx.AsyncClient(timeout=30) as client:
        started = time.perf_counter()
        for r in requests:
            headers = {
                k: v for k, v in r["headers"].items() if k in ("content-type", "accept", "anthropic-version")
            }
            async with client.stream(
                "POST", url + r["path"], content=r["body"].encode(), headers=headers
            ) as response:
                async for _ in response.aiter_bytes():
                    pass
        return time.perf_counter() - started


async def measure(url: str, wire: str, workspace: Path, calls: int, repeats: int) -> dict[str, Any]:
    control = httpx.AsyncClient(base_url=url, timeout=60)
    await control.post("/_kgent/script", json=script(calls))
    kernel_walls, floor_walls = [], []
    for _ in range(repeats):
        await control.post("/_kgent/reset")
        kernel_walls.append(await kernel_run(url, wire, workspace, calls))
        requests = (await control.get("/_kgent/requests")).json()["requests"]
        assert len(requests) == calls
        floor_walls.append(await floor_run(url, requests))
    await control.aclose()
    # The machine is shared: take the best of the interleaved repeats (noise only ever adds time); medians as well.
    kernel_ms, floor_ms = min(kernel_walls) * 1000, min(floor_walls) * 1000
    kernel_med, floor_med = statistics.median(kernel_walls) * 1000, statistics.median(floor_walls) * 1000
    return {
        "wire": wire,
        "calls": calls,
        "repeats": repeats,
        "kernel_ms": round(kernel_ms, 2),
        "floor_ms": round(floor_ms, 2),
        "floor_ms_per_call": round(floor_ms / calls, 3),
        "overhead_ms_per_call": round((kernel_ms - floor_ms) / calls, 3),
        "median_overhead_ms_per_call": round((kernel_med - floor_med) / calls, 3),
        "last_request_kib": round(len(requests[-1]["body"]) / 1024, 1),
    }


def cli_peak_rss(url: str, workspace: Path, calls: int) -> dict[str, Any]:
    """Peak RSS and wall of a `kgent run` subprocess doing the N-call run.

    On Linux, VmHWM from /proc is polled: a child's ru_maxrss (wait4, RUSAGE_CHILDREN) starts from the parent's RSS
    at fork, so it would report this benchmark's own memory. Elsewhere ru_maxrss is the (upper-bound) fallback."""
    httpx.post(f"{url}/_kgent/script", json=script(calls))
    httpx.post(f"{url}/_kgent/reset")
    with tempfile.TemporaryDirectory() as state:
        env = {**os.environ, "KGENT_STATE_DIR": state}
        cmd = [
            sys.executable,
            "-m",
            "kgent.cli.main",
            "run",
            "--provider",
            "openai",
            "--base-url",
            f"{url}/v1",
            "--model",
            "bench",
            "--mode",
            "full",
            "--max-turns",
            str(calls + 1),
            "--workspace",
            str(workspace),
            "read sample.py repeatedly, then answer",
        ]
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        status_file, hwm_kib = Path(f"/proc/{proc.pid}/status"), 0
        while proc.poll() is None:
            try:
                for line in status_file.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        hwm_kib = max(hwm_kib, int(line.split()[1]))
            except (OSError, ValueError):
                pass
            time.sleep(0.002)
        wall = time.perf_counter() - started
        method = "VmHWM"
        if not hwm_kib:
            method = "ru_maxrss"
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            hwm_kib = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss
    if proc.returncode != 0:
        raise SystemExit(
            f"kgent run failed ({proc.returncode}): {proc.stderr.read().decode() if proc.stderr else ''}"
        )
    return {
        "calls": calls,
        "peak_rss_mib": round(hwm_kib / 1024, 1),
        "wall_s": round(wall, 2),
        "method": method,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, nargs="+", default=[20, 100, 400])
    parser.add_argument("--wires", nargs="+", default=["openai", "anthropic"])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-rss", action="store_true", help="skip the `kgent run` subprocess")
    args = parser.parse_args(argv)

    server, url = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            workspace = Path(tmp)
            (workspace / "sample.py").write_text("value = 1\nprint(value)\n")
            asyncio.run(measure(url, args.wires[0], workspace, 5, 1))  # warm up imports, caches, the server
            rows = [
                asyncio.run(measure(url, wire, workspace, n, args.repeats))
                for wire in args.wires
                for n in args.calls
            ]
            rss = None if args.no_rss else cli_peak_rss(url, workspace, max(args.calls))
    finally:
        server.terminate()
        server.wait(10)

    print(
        f"{'wire':<10}{'calls':>6}{'kernel ms':>11}{'floor ms':>10}{'floor/call':>11}{'overhead/call':>15}{'(median)':>10}"
    )
    for r in rows:
        print(
            f"{r['wire']:<10}{r['calls']:>6}{r['kernel_ms']:>11.1f}{r['floor_ms']:>10.1f}"
            f"{r['floor_ms_per_call']:>11.3f}{r['overhead_ms_per_call']:>15.3f}{r['median_overhead_ms_per_call']:>10.3f}"
        )
    growth = {}
    for wire in args.wires:
        by_n = {r["calls"]: r["overhead_ms_per_call"] for r in rows if r["wire"] == wire}
        lo, hi = min(by_n), max(by_n)
        growth[wire] = round(by_n[hi] / by_n[lo], 2) if by_n[lo] > 0 else None
        print(f"{wire}: overhead growth {lo}→{hi} calls: {growth[wire]}×")
    if rss:
        print(f"kgent run, {rss['calls']} calls: peak RSS {rss['peak_rss_mib']} MiB, wall {rss['wall_s']} s")

    record(
        RESULTS,
        {
            "goals": GOALS,
            "runs": rows,
            "growth": growth,
            "kgent_run": rss,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
