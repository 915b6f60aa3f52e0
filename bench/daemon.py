"""Daemon benchmark: `kgent serve --stdio` as an editor sees it, each figure against a floor measured in the same run.

1. Handshake: spawn → `initialize` reply, against spawning `python -c pass` and against a bare pygls server
   answering `initialize` (a Python JSON-RPC server as most are built; the daemon's own core, docs/adr/0006, and its
   stdlib-only boot path answer sooner). Also spawn → the first reply that needs the full server ("ready").
2. Model calls: one run of 23 model calls through the daemon against the local model server (OpenAI wire), 22 of
   them `write` calls each approved by the client over `agent/permission`, sessions in the JSONL store — once with
   sessions and workspace on disk, once on tmpfs (where fsync costs nothing). Floors: the same 23 requests
   replayed with raw httpx, and the same run in-process (the kernel driven directly, approvals answered
   in-process, same store) — the difference to the latter is what the daemon adds per model call.
3. Notifications/s: a scripted answer streamed as 200 000 deltas, read by a plain blocking client; floor: the
   same client reading the same number of pre-built frames from a process that only writes them.

    .venv/bin/python bench/daemon.py [--repeats 11] [--events 200000]

Writes bench/results/daemon.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from record import record

from kgent.daemon.framing import FrameParser, frame
from kgent.testing.daemon_client import DaemonClient, daemon_command

RESULTS = Path(__file__).parent / "results" / "daemon.json"
GOALS = {"handshake_ms": 180, "ms_per_model_call": 3.0, "events_per_s": 100_000}
CALLS = 23

BARE_PYGLS = """
from pygls.protocol import JsonRPCProtocol, default_converter
from pygls.server import JsonRPCServer
server = JsonRPCServer(JsonRPCProtocol, default_converter)
@server.feature("initialize")
def initialize(ls, params):
    return {"serverInfo": {"name": "bare"}, "protocolVersion": 1, "capabilities": {}}
@server.feature("exit")
def exit_(ls, params):
    ls.shutdown()
server.start_io()
"""


def env_for(state: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("KGENT_")}
    env.update(KGENT_STATE_DIR=state, **extra)
    return env


# -- 1. handshake ------------------------------------------------------------------------------------------------------
class Pipe:
    """A blocking client on raw pipes (adds next to nothing to what is measured)."""

    def __init__(self, cmd: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self.parser = FrameParser()
        self.pending: list[Any] = []

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(json.dumps(message).encode()))
        self.proc.stdin.flush()

    def recv(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while not self.pending:
            data = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not data:
                raise EOFError("the process closed its stdout")
            self.pending += [json.loads(b) for b in self.parser.feed(data)]
        return self.pending.pop(0)

    def until(self, msg_id: Any) -> dict[str, Any]:
        while True:
            message = self.recv()
            if message.get("id") == msg_id and "method" not in message:
                return message

    def close(self) -> None:
        try:
            self.send({"jsonrpc": "2.0", "method": "exit"})
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait(10)


INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientInfo": {"name": "bench"}},
}


def handshake(
    cmd: list[str], env: dict[str, str], ready_probe: dict[str, Any] | None = None
) -> tuple[float, float | None]:
    started = time.perf_counter()
    p = Pipe(cmd, env)
    p.send(INIT)
    p.until(0)
    init_ms = (time.perf_counter() - started) * 1000
    ready_ms = None
    if ready_probe is not None:
        p.send(ready_probe)
        p.until(ready_probe["id"])
        ready_ms = (time.perf_counter() - started) * 1000
    p.close()
    return init_ms, ready_ms


def bench_handshake(repeats: int, tmp: Path) -> dict[str, Any]:
    bare = tmp / "bare_pygls.py"
    bare.write_text(BARE_PYGLS)
    env = env_for(str(tmp / "state"), KGENT_PROVIDER="scripted")
    probe = {"jsonrpc": "2.0", "id": 1, "method": "agent/sessions", "params": {"workspace": str(tmp)}}
    rows: dict[str, list[float]] = {
        "python -c pass": [],
        "bare pygls": [],
        "kgent initialize": [],
        "kgent ready": [],
    }
    for _ in range(repeats):  # interleaved, so drift hits all alike
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        rows["python -c pass"].append((time.perf_counter() - started) * 1000)
        rows["bare pygls"].append(handshake([sys.executable, str(bare)], env)[0])
        init_ms, ready_ms = handshake(daemon_command(), env, probe)
        rows["kgent initialize"].append(init_ms)
        rows["kgent ready"].append(ready_ms or 0.0)
    med = {k: statistics.median(v) for k, v in rows.items()}
    return {
        "command": " ".join(
            Path(daemon_command()[0]).name if i == 0 else a for i, a in enumerate(daemon_command())
        ),
        "repeats": repeats,
        "median_ms": {k: round(v, 1) for k, v in med.items()},
        "min_ms": {k: round(min(v), 1) for k, v in rows.items()},
        "handshake_ms": round(med["kgent initialize"], 1),
        "ratio_to_python": round(med["kgent initialize"] / med["python -c pass"], 2),
        "ratio_to_bare_pygls": round(med["kgent initialize"] / med["bare pygls"], 2),
        "ready_ms": round(med["kgent ready"], 1),
    }


# -- 2. model calls ------------------------------------------------------------------------------------------------------
def call_script(calls: int) -> list[list[dict[str, Any]]]:
    turns: list[list[dict[str, Any]]] = [
        [
            {"text": f"Writing file {i}."},
            {"tool": "write", "args": {"path": f"f{i}.txt", "content": f"line {i}\n"}},
        ]
        for i in range(calls - 1)
    ]
    return turns + [[{"text": "Wrote every file.", "chunks": 4}]]


class DaemonSession:
    """One daemon for the whole measurement, as an editor keeps it: spawned, initialized, then run after run."""

    def __init__(self, client: DaemonClient) -> None:
        self.client = client
        self.ended: asyncio.Future[dict[str, Any]] | None = None
        client.on_notification = self._note
        client.on_request["agent/permission"] = self._approve

    @classmethod
    async def start(cls, url: str, state: str, workspace: Path) -> DaemonSession:
        env = env_for(state, KGENT_PROVIDER="openai", KGENT_BASE_URL=f"{url}/v1", KGENT_MODEL="bench")
        session = cls(await DaemonClient.spawn(env=env))
        await session.client.request("initialize", {"protocolVersion": 1})
        await session.client.request("agent/sessions", {"workspace": str(workspace)})  # the full server is up
        await asyncio.sleep(1.0)  # the background warm-up; an editor's user types for longer than this
        return session

    def _note(self, method: str, params: Any) -> None:
        if method == "agent/event" and params["event"]["type"] == "run_end" and self.ended is not None:
            self.ended.set_result(params["event"])

    async def _approve(self, params: Any) -> dict[str, str]:
        return {"outcome": "selected", "optionId": "allow_once"}

    async def run(self, workspace: Path) -> float:
        self.ended = asyncio.get_running_loop().create_future()
        started = time.perf_counter()
        await self.client.request(
            "agent/run", {"prompt": "write the files", "workspace": str(workspace), "mode": "ask"}
        )
        end = await self.ended
        wall = time.perf_counter() - started
        if end["status"] != "settled" or end["turns"] != CALLS:
            raise SystemExit(f"daemon run failed: {end}")
        return wall


class InProcess:
    """The same runs with the kernel driven directly (approvals answered in-process, same JSONL store)."""

    def __init__(self, url: str, state: str) -> None:
        from kgent.kernel import AgentKernel, KernelConfig
        from kgent.providers.base import ProviderConfig
        from kgent.providers.openai import OpenAIProvider
        from kgent.session.jsonl import JsonlSessionStore

        provider = OpenAIProvider(ProviderConfig(provider="openai", model="bench", base_url=f"{url}/v1"))
        self.kernel = AgentKernel(
            provider, store=JsonlSessionStore(Path(state) / "sessions"), config=KernelConfig()
        )

    async def run(self, workspace: Path) -> float:
        from kgent.core.events import PermissionRequest

        started = time.perf_counter()
        run = self.kernel.create_run("write the files", workspace=str(workspace), mode="ask")
        async for event in run:
            if isinstance(event, PermissionRequest):
                run.resolve_permission(event.request_id, "allow_once")
        result = await run.result()
        wall = time.perf_counter() - started
        if result.status != "settled" or result.turns != CALLS:
            raise SystemExit(f"in-process run failed: {result}")
        return wall


async def floor_run(url: str, requests: list[dict[str, Any]]) -> float:
    async with httpx.AsyncClient(timeout=30) as client:
        started = time.perf_counter()
        for r in requests:
            headers = {k: v for k, v in r["headers"].items() if k in ("content-type", "accept")}
            async with client.stream(
                "POST", url + r["path"], content=r["body"].encode(), headers=headers
            ) as response:
                async for _ in response.aiter_bytes():
                    pass
        return time.perf_counter() - started


def bench_calls(repeats: int, roots: dict[str, Path]) -> dict[str, Any]:
    """The local model server runs in its own process, as a remote model would. One measurement per storage root:
    sessions and workspaces on disk (5 fsyncs per call here: 3 session appends, the written file and its
    directory) and, where there is one, on tmpfs (fsync is free: what remains is CPU)."""
    server = subprocess.Popen([sys.executable, "-m", "kgent.testing"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        return {name: asyncio.run(measure_calls(url, repeats, root)) for name, root in roots.items()}
    finally:
        server.terminate()
        server.wait(10)


async def measure_calls(url: str, repeats: int, root: Path) -> dict[str, Any]:
    control = httpx.AsyncClient(base_url=url, timeout=60)
    await control.post("/_kgent/script", json=call_script(CALLS))
    counter = iter(range(10_000))

    def fresh_workspace() -> Path:
        workspace = root / f"ws-{next(counter)}"
        workspace.mkdir()
        return workspace

    async def played(runner: Any) -> tuple[float, list[dict[str, Any]]]:
        await control.post("/_kgent/reset")
        wall = await runner.run(fresh_workspace())
        requests = (await control.get("/_kgent/requests")).json()["requests"]
        assert len(requests) == CALLS
        return wall, requests

    daemon = await DaemonSession.start(url, str(root / "state-daemon"), root)
    in_process = InProcess(url, str(root / "state-in-process"))
    first, _ = await played(daemon)  # the editor's first prompt after start-up
    await played(in_process)  # warm-up, dropped
    walls: dict[str, list[float]] = {"daemon": [], "in_process": [], "floor": []}
    for _ in range(repeats):  # interleaved, so drift hits all alike
        wall, _ = await played(daemon)
        walls["daemon"].append(wall)
        wall, requests = await played(in_process)
        walls["in_process"].append(wall)
        walls["floor"].append(await floor_run(url, requests))
    await daemon.client.close()
    await in_process.kernel.aclose()
    await control.aclose()
    per_call = {k: min(v) * 1000 / CALLS for k, v in walls.items()}  # best of: noise only ever adds time
    per_call_med = {k: statistics.median(v) * 1000 / CALLS for k, v in walls.items()}
    return {
        "calls": CALLS,
        "approvals": CALLS - 1,
        "repeats": repeats,
        "ms_per_model_call": round(per_call["daemon"], 3),
        "median_ms_per_model_call": round(per_call_med["daemon"], 3),
        "first_run_ms_per_model_call": round(first * 1000 / CALLS, 3),
        "in_process_ms_per_call": round(per_call["in_process"], 3),
        "floor_ms_per_call": round(per_call["floor"], 3),
        "daemon_overhead_ms_per_call": round(per_call["daemon"] - per_call["in_process"], 3),
        "median_daemon_overhead_ms_per_call": round(per_call_med["daemon"] - per_call_med["in_process"], 3),
        "ratio_to_floor": round(per_call["daemon"] / per_call["floor"], 2),
    }


# -- 3. notifications/s ----------------------------------------------------------------------------------------------------
WRITER = """
import os, sys
n = int(sys.argv[1])
body = sys.argv[2].encode()
chunk = b"Content-Length: %d\\r\\n\\r\\n%s" % (len(body), body)
batch = chunk * 1000
for _ in range(n // 1000):
    os.write(1, batch)
"""


def read_events(p: Pipe, stop: Any) -> tuple[int, float, float]:
    """Read frames until `stop(message)`; (frames, time of the first, time of the last)."""
    assert p.proc.stdout is not None
    fd, parser = p.proc.stdout.fileno(), FrameParser()
    count, first, last = 0, 0.0, 0.0
    while True:
        data = os.read(fd, 1 << 20)
        if not data:
            return count, first, last
        now = time.perf_counter()
        for body in parser.feed(data):
            message = json.loads(body)
            if message.get("method") == "agent/event":
                if not count:
                    first = now
                count += 1
                last = now
                if stop(message):
                    return count, first, last


def bench_events(n: int, tmp: Path) -> dict[str, Any]:
    script = tmp / "burst.json"
    script.write_text(json.dumps([[{"text": "x " * n, "chunks": n}]]))
    env = env_for(str(tmp / "state-events"), KGENT_PROVIDER="scripted")
    p = Pipe(daemon_command(), env)
    p.send(INIT)
    p.until(0)
    p.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "agent/run",
            "params": {"prompt": "burst", "workspace": str(tmp), "model": str(script), "mode": "full"},
        }
    )
    count, first, last = read_events(p, lambda m: m["params"]["event"]["type"] == "run_end")
    p.close()
    daemon_rate = (count - 1) / (last - first)
    sample = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "agent/event",
            "params": {
                "runId": "run-0123456789ab",
                "sessionId": "0123456789ab",
                "seq": 123456,
                "event": {"type": "message_delta", "kind": "text", "delta": "x "},
            },
        },
        separators=(",", ":"),
    )
    w = Pipe([sys.executable, "-c", WRITER, str(n), sample], env)
    floor_count, f_first, f_last = read_events(w, lambda m: False)
    w.proc.wait(10)
    floor_rate = (floor_count - 1) / (f_last - f_first)
    return {
        "events": count,
        "events_per_s": round(daemon_rate),
        "client_floor_events_per_s": round(floor_rate),
        "ratio_to_client_floor": round(daemon_rate / floor_rate, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--events", type=int, default=200_000)
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        roots = {"disk": tmp}
        if os.path.isdir("/dev/shm"):
            roots["tmpfs"] = Path(stack.enter_context(tempfile.TemporaryDirectory(dir="/dev/shm")))
        hs = bench_handshake(args.repeats, tmp)
        calls = bench_calls(args.repeats, roots)
        events = bench_events(args.events, tmp)

    m = hs["median_ms"]
    print(f"handshake ({hs['command']}), median of {hs['repeats']}:")
    print(f"  python -c pass {m['python -c pass']:>8.1f} ms")
    print(f"  bare pygls     {m['bare pygls']:>8.1f} ms   (spawn → initialize reply)")
    print(
        f"  kgent          {m['kgent initialize']:>8.1f} ms   = {hs['ratio_to_python']}× python, "
        f"{hs['ratio_to_bare_pygls']}× bare pygls   (goal ≤ {GOALS['handshake_ms']} ms)"
    )
    print(
        f"  kgent ready    {m['kgent ready']:>8.1f} ms   (spawn → first reply needing the server + the kernel)"
    )
    for where, c in calls.items():
        print(
            f"model calls, sessions and workspace on {where}: {c['calls']} calls, {c['approvals']} approvals, "
            f"best of {c['repeats']}:"
        )
        print(
            f"  through the daemon {c['ms_per_model_call']:>7.3f} ms/call (median {c['median_ms_per_model_call']}; "
            f"first run after start {c['first_run_ms_per_model_call']})   (goal ≤ {GOALS['ms_per_model_call']})"
        )
        print(
            f"  in-process kernel  {c['in_process_ms_per_call']:>7.3f} ms/call   → the daemon adds "
            f"{c['daemon_overhead_ms_per_call']} ms/call (median {c['median_daemon_overhead_ms_per_call']})"
        )
        print(f"  raw httpx floor    {c['floor_ms_per_call']:>7.3f} ms/call   → {c['ratio_to_floor']}× floor")
    print(
        f"notifications: {events['events']} events at {events['events_per_s']:,}/s "
        f"(client floor {events['client_floor_events_per_s']:,}/s, {events['ratio_to_client_floor']}×)"
        f"   (goal ≥ {GOALS['events_per_s']:,}/s)"
    )

    record(
        RESULTS,
        {
            "goals": GOALS,
            "handshake": hs,
            "model_calls": calls,
            "notifications": events,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
