"""The first run in a fresh process (issue 37): Kgent's fronts against Pi (`pi --mode rpc`, `pi -p`) and the floor
agent on the same scripted work, against the same local model server, in the same run.

Two paths: strict (spawn → handshake → the prompt at once) and realistic (1 s between the handshake and the prompt,
as a person types). Measured, medians of interleaved repeats:
- one-shot: the floor (bench/floor.py), `kgent run --json`, `pi -p` — the whole process, wall and CPU; and the floor
  on asyncio and httpx.AsyncClient (`--asyncio`), which Kgent runs on: what that costs, and Kgent against it;
- the stdio daemon and Pi RPC: spawn → first `run_end` / `agent_end`, the first run alone, the second run;
- `kgent acp` (a raw ACP client): spawn → `initialize`, → `session/new` answered, → the first `agent_message_chunk`
  of a one-turn answer; beside it Pi RPC's spawn → its first answered command and → its first text delta, and the
  daemon's spawn → `initialize` and → its first `message_delta`.
Printed as ratios to the floor or the peer measured in the same run (goals in brackets); absolute figures and the
load average go to bench/results/firstrun.json. Pi comes from bench/pi (`npm ci` there; `make bench` does it).

    .venv/bin/python bench/firstrun.py [--repeats 3] [--calls 23] [--gap 1.0]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ratios import PROMPT, Bench, script
from record import record

from daemon import INIT, Pipe
from kgent.testing.daemon_client import daemon_command

RESULTS = Path(__file__).parent / "results" / "firstrun.json"
PI = Path(__file__).parent / "pi" / "node_modules" / ".bin" / "pi"
ACP = [sys.executable, "-m", "kgent", "acp"]
HELLO = [[{"text": "Hello! How can I help you today?", "chunks": 8}]]
GOALS = {
    "run vs floor": 1.3,
    "daemon first run_end vs Pi RPC": 0.5,
    "daemon first run vs its second": 1.5,
}
ABSOLUTE_GOALS_MS = {"acp session/new": 300, "acp first chunk": 500}


class Lines:
    """A blocking newline-delimited JSON client on pipes (ACP and Pi RPC both speak it)."""

    def __init__(self, cmd: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def until(self, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"{self.proc.args[0]} closed its stdout (exit {self.proc.wait(10)})")
            message: dict[str, Any] = json.loads(line)
            if done(message):
                return message

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            self.proc.wait(10)


class Peers(Bench):
    """The floor's bench (model server, git work trees, Kgent's environment) plus Pi's configuration."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        self.pi_dir = tmp / "pi-agent"
        self.pi_dir.mkdir()
        provider = {
            "baseUrl": self.base_url("openai"),
            "api": "openai-completions",
            "apiKey": "bench",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "bench"}],
        }
        (self.pi_dir / "models.json").write_text(json.dumps({"providers": {"bench": provider}}))

    def pi_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        # PI_OFFLINE: no update check, package check or telemetry at start (nothing leaves this machine)
        env.update(PI_CODING_AGENT_DIR=str(self.pi_dir), PI_OFFLINE="1", PI_TELEMETRY="0")
        return env

    def pi(self, *args: str) -> list[str]:
        return [str(PI), "--provider", "bench", "--model", "bench", "--no-session", *args]

    def task(self, turns: list[list[dict[str, Any]]]) -> None:
        self.control.post("/_kgent/script", json=turns)


# -- one-shot ----------------------------------------------------------------------------------------------------------
def oneshot(b: Peers, calls: int) -> dict[str, dict[str, float]]:
    b.task(script(calls))
    row = {
        "floor": b.process("floor", b.floor_cmd("openai"), "openai", calls),
        "floor on asyncio": b.process(
            "floor on asyncio", [*b.floor_cmd("openai"), "--asyncio"], "openai", calls
        ),
        "kgent run": b.process("kgent run", b.kgent_cmd(), "openai", calls),
    }
    ws = b.workspace()
    b.control.post("/_kgent/reset")
    started = time.perf_counter()
    proc = subprocess.Popen(b.pi("-p", PROMPT), cwd=ws, env=b.pi_env(), stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"pi -p exited {os.waitstatus_to_exitcode(status)}")
    b.check("pi -p", ws, calls)
    row["pi -p"] = {"s": wall, "cpu_s": usage.ru_utime + usage.ru_stime}
    return row


# -- the daemon and Pi RPC: first and second run -----------------------------------------------------------------------
def daemon_runs(b: Peers, calls: int, gap: float) -> dict[str, float]:
    b.task(script(calls))
    started = time.perf_counter()
    pipe = Pipe(daemon_command(), b.env("openai"))
    pipe.send(INIT)
    pipe.until(0)
    initialize = time.perf_counter() - started
    if gap:
        time.sleep(gap)
    first = _daemon_run(b, pipe, calls, 1)
    first_end = time.perf_counter() - started
    second = _daemon_run(b, pipe, calls, 2)
    pipe.close()
    return {
        "initialize_s": initialize,
        "first_end_s": first_end,
        "first_run_s": first,
        "second_run_s": second,
    }


def _daemon_run(b: Peers, pipe: Pipe, calls: int, msg_id: int) -> float:
    ws = b.workspace()
    b.control.post("/_kgent/reset")
    begun = time.perf_counter()
    params = {"prompt": PROMPT, "workspace": str(ws), "mode": "full"}
    pipe.send({"jsonrpc": "2.0", "id": msg_id, "method": "agent/run", "params": params})
    while True:
        message = pipe.recv()
        if message.get("id") == msg_id and "error" in message:
            raise SystemExit(f"daemon: {message['error']}")
        event = (message.get("params") or {}).get("event") or {}
        if message.get("method") == "agent/event" and event.get("type") == "run_end":
            if event["status"] != "settled":
                raise SystemExit(f"daemon run: {event}")
            ended = time.perf_counter() - begun
            b.check("daemon", ws, calls)
            return ended


def pi_runs(b: Peers, calls: int, gap: float) -> dict[str, float]:
    """Pi RPC has no handshake: the first command is the prompt (after `gap`). Both runs in one work tree (Pi's
    cwd is fixed at spawn), the file put back between them."""
    b.task(script(calls))
    ws = b.workspace()
    started = time.perf_counter()
    pi = Lines(b.pi("--mode", "rpc"), b.pi_env(), ws)
    if gap:
        time.sleep(gap)
    first = _pi_run(b, pi, ws, calls, "1")
    first_end = time.perf_counter() - started
    (ws / "sample.py").write_text((ws / "sample.py").read_text().replace("value = 2", "value = 1"))
    pi.send({"id": "new", "type": "new_session"})
    pi.until(lambda m: m.get("id") == "new")
    second = _pi_run(b, pi, ws, calls, "2")
    pi.close()
    return {"first_end_s": first_end, "first_run_s": first, "second_run_s": second}


def _pi_run(b: Peers, pi: Lines, ws: Path, calls: int, msg_id: str) -> float:
    b.control.post("/_kgent/reset")
    begun = time.perf_counter()
    pi.send({"id": msg_id, "type": "prompt", "message": PROMPT})
    pi.until(lambda m: m.get("type") == "agent_end")
    ended = time.perf_counter() - begun
    b.check("pi rpc", ws, calls)
    return ended


# -- first text: ACP, the daemon, Pi RPC -------------------------------------------------------------------------------
def acp_first_text(b: Peers, gap: float) -> dict[str, float]:
    b.task(HELLO)
    ws = b.workspace()
    started = time.perf_counter()
    acp = Lines(ACP, b.env("openai"), ws)
    acp.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    acp.until(lambda m: m.get("id") == 0)
    initialize = time.perf_counter() - started
    new = {"cwd": str(ws), "mcpServers": []}
    acp.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new})
    session = acp.until(lambda m: m.get("id") == 1)["result"]["sessionId"]
    session_new = time.perf_counter() - started
    if gap:
        time.sleep(gap)
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
    sent = time.perf_counter()
    acp.send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
    acp.until(
        lambda m: (m.get("params") or {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
    )
    chunk = time.perf_counter()
    acp.until(lambda m: m.get("id") == 2)
    acp.close()
    return {
        "initialize_s": initialize,
        "session_new_s": session_new,
        "first_chunk_s": chunk - started,
        "prompt_to_chunk_s": chunk - sent,
    }


def daemon_first_text(b: Peers, gap: float) -> dict[str, float]:
    b.task(HELLO)
    ws = b.workspace()
    started = time.perf_counter()
    pipe = Pipe(daemon_command(), b.env("openai"))
    pipe.send(INIT)
    pipe.until(0)
    initialize = time.perf_counter() - started
    if gap:
        time.sleep(gap)
    sent = time.perf_counter()
    params = {"prompt": "hi", "workspace": str(ws)}
    pipe.send({"jsonrpc": "2.0", "id": 1, "method": "agent/run", "params": params})
    while True:
        m = pipe.recv()
        if m.get("method") == "agent/event" and m["params"]["event"]["type"] == "message_delta":
            break
    delta = time.perf_counter()
    while not (m.get("method") == "agent/event" and m["params"]["event"]["type"] == "run_end"):
        m = pipe.recv()
    pipe.close()
    return {"initialize_s": initialize, "first_delta_s": delta - started, "prompt_to_delta_s": delta - sent}


def pi_first_text(b: Peers, gap: float) -> dict[str, float]:
    b.task(HELLO)
    ws = b.workspace()
    started = time.perf_counter()
    pi = Lines(b.pi("--mode", "rpc"), b.pi_env(), ws)
    pi.send({"id": "state", "type": "get_state"})
    pi.until(lambda m: m.get("id") == "state")
    ready = time.perf_counter() - started
    if gap:
        time.sleep(gap)
    sent = time.perf_counter()
    pi.send({"id": "1", "type": "prompt", "message": "hi"})
    pi.until(lambda m: (m.get("assistantMessageEvent") or {}).get("type") == "text_delta")
    delta = time.perf_counter()
    pi.until(lambda m: m.get("type") == "agent_end")
    pi.close()
    return {"ready_s": ready, "first_delta_s": delta - started, "prompt_to_delta_s": delta - sent}


# -- the whole measurement ---------------------------------------------------------------------------------------------
def med(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def measure(b: Peers, sizes: list[int], repeats: int, gap: float) -> dict[str, Any]:
    out: dict[str, Any] = {"oneshot": {}, "strict": {}, "realistic": {}}
    for calls in sizes:
        rows = [oneshot(b, calls) for _ in range(repeats)]
        out["oneshot"][calls] = {who: med([r[who] for r in rows]) for who in rows[0]}
    calls = sizes[0]
    for path, pause in (("strict", 0.0), ("realistic", gap)):
        runs: dict[str, list[dict[str, float]]] = {
            k: [] for k in ("daemon", "pi", "acp", "daemon text", "pi text")
        }
        for _ in range(repeats):  # interleaved, so drift hits all alike
            runs["daemon"].append(daemon_runs(b, calls, pause))
            runs["pi"].append(pi_runs(b, calls, pause))
            runs["acp"].append(acp_first_text(b, pause))
            runs["daemon text"].append(daemon_first_text(b, pause))
            runs["pi text"].append(pi_first_text(b, pause))
        out[path] = {k: med(v) for k, v in runs.items()}
    return out


def ratios(m: dict[str, Any]) -> dict[str, float]:
    r: dict[str, float] = {}
    for calls, row in m["oneshot"].items():
        r[f"run vs floor@{calls}"] = row["kgent run"]["s"] / row["floor"]["s"]
        r[f"run vs pi -p@{calls}"] = row["kgent run"]["s"] / row["pi -p"]["s"]
        r[f"floor on asyncio vs floor@{calls}"] = row["floor on asyncio"]["s"] / row["floor"]["s"]
        r[f"run vs floor on asyncio@{calls}"] = row["kgent run"]["s"] / row["floor on asyncio"]["s"]
    for path in ("strict", "realistic"):
        d, p = m[path]["daemon"], m[path]["pi"]
        r[f"daemon first run_end vs Pi RPC@{path}"] = d["first_end_s"] / p["first_end_s"]
        r[f"daemon first run vs its second@{path}"] = d["first_run_s"] / d["second_run_s"]
        r[f"Pi RPC first run vs its second@{path}"] = p["first_run_s"] / p["second_run_s"]
        r[f"acp first chunk vs Pi RPC first delta@{path}"] = (
            m[path]["acp"]["first_chunk_s"] / m[path]["pi text"]["first_delta_s"]
        )
    return r


def verdict(value: float, limit: float | None) -> str:
    if limit is None:
        return f"{value:>5.2f}×"
    return f"{value:>5.2f}× [≤{limit}] {'ok' if value <= limit else 'MISSED'}"


def report(m: dict[str, Any], repeats: int) -> dict[str, float]:
    r = ratios(m)
    print(
        f"\nfirst runs (medians of {repeats}, OpenAI wire, load {os.getloadavg()[0]:.1f}; goals in brackets)"
    )
    for calls, row in m["oneshot"].items():
        f, k, p = row["floor"], row["kgent run"], row["pi -p"]
        print(
            f"  one-shot, {calls} calls: kgent run {verdict(r[f'run vs floor@{calls}'], GOALS['run vs floor'])} the"
            f" floor, {r[f'run vs pi -p@{calls}']:.2f}× pi -p   (floor {f['s']:.2f} s / CPU {f['cpu_s']:.2f} s; kgent"
            f" {k['s']:.2f} / {k['cpu_s']:.2f} s; pi -p {p['s']:.2f} / {p['cpu_s']:.2f} s)"
        )
        a = row["floor on asyncio"]
        print(
            f"    the floor on asyncio: {r[f'floor on asyncio vs floor@{calls}']:.2f}× the floor ({a['s']:.2f} s / CPU"
            f" {a['cpu_s']:.2f} s); kgent run {r[f'run vs floor on asyncio@{calls}']:.2f}× it"
        )
    for path in ("strict", "realistic"):
        d, p, a = m[path]["daemon"], m[path]["pi"], m[path]["acp"]
        dt, pt = m[path]["daemon text"], m[path]["pi text"]
        goal = GOALS if path == "strict" else {}
        print(f"  {path}:")
        print(
            f"    daemon spawn → first run_end"
            f" {verdict(r[f'daemon first run_end vs Pi RPC@{path}'], goal.get('daemon first run_end vs Pi RPC'))}"
            f" Pi RPC's   (daemon {d['first_end_s'] * 1000:.0f} ms: initialize {d['initialize_s'] * 1000:.0f}, run"
            f" {d['first_run_s'] * 1000:.0f}; Pi {p['first_end_s'] * 1000:.0f} ms: run {p['first_run_s'] * 1000:.0f})"
        )
        print(
            f"    first run vs the second: daemon"
            f" {verdict(r[f'daemon first run vs its second@{path}'], goal.get('daemon first run vs its second'))}"
            f" ({d['second_run_s'] * 1000:.0f} ms), Pi RPC {r[f'Pi RPC first run vs its second@{path}']:.2f}×"
            f" ({p['second_run_s'] * 1000:.0f} ms)"
        )
        print(
            f"    kgent acp: initialize {a['initialize_s'] * 1000:.0f} ms, session/new {a['session_new_s'] * 1000:.0f}"
            f" ms [≤{ABSOLUTE_GOALS_MS['acp session/new']}], first chunk {a['first_chunk_s'] * 1000:.0f} ms"
            f" [≤{ABSOLUTE_GOALS_MS['acp first chunk']}] ({a['prompt_to_chunk_s'] * 1000:.0f} after the prompt):"
            f" {r[f'acp first chunk vs Pi RPC first delta@{path}']:.2f}× Pi RPC's first delta"
            f" ({pt['first_delta_s'] * 1000:.0f} ms; its first command answered {pt['ready_s'] * 1000:.0f} ms);"
            f" daemon initialize {dt['initialize_s'] * 1000:.0f} ms, first delta {dt['first_delta_s'] * 1000:.0f} ms"
        )
    return r


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls", type=int, nargs="+", default=[23, 103])
    parser.add_argument(
        "--gap", type=float, default=1.0, help="seconds between handshake and prompt (realistic)"
    )
    args = parser.parse_args(argv)
    if not PI.exists():
        raise SystemExit(f"Pi is not installed: run `npm ci` in {PI.parents[2]} (make bench does)")
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        bench = Peers(Path(tmp))
        try:
            measured = measure(bench, args.calls, args.repeats, args.gap)
        finally:
            bench.close()
    r = report(measured, args.repeats)
    record(
        RESULTS,
        {
            "load_average": {"start": load, "end": os.getloadavg()},
            "repeats": args.repeats,
            "gap_s": args.gap,
            "goals": {**GOALS, **{k: f"≤ {v} ms" for k, v in ABSOLUTE_GOALS_MS.items()}},
            "ratios": {k: round(v, 3) for k, v in r.items()},
            "measured": measured,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
