"""Kgent against the floor (bench/floor.py, a ~100-line agent): the same scripted task, whole processes, same run.

The task at N model calls: N-3 reads, one edit, one shell command, then a 200-delta answer, served by the local
model server (kgent.testing) in its own process, on the OpenAI and the Anthropic wire. Measured, medians of
interleaved repeats: the floor process; `kgent run --json` (mode full) as a whole process; the time from exec to
the first model request; peak RSS; the daemon from spawn to the first `run_end` (initialize, then agent/run at
once) and a warm run in the same daemon (per call, against the floor agent's per-call cost with its imports
warm). Printed as ratios to the floor, with the ratio of CPU time (the process and its children: git, the shell),
which the load of a shared machine moves far less than wall time; absolute figures go to bench/results/ratios.json.

    .venv/bin/python bench/ratios.py [--repeats 3] [--calls 23 103 403] [--wires openai anthropic]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import floor
import httpx
from record import record

import kgent
from daemon import INIT, Pipe
from kgent.testing.daemon_client import daemon_command

RESULTS = Path(__file__).parent / "results" / "ratios.json"
GOALS = {
    "run": 1.3,
    "first_request": 1.5,
    "daemon_first_run": 1.3,
    "daemon_warm_per_call": 1.2,
    "peak_rss": 1.5,
}
ANSWER = " ".join(f"w{i}" for i in range(200))
SAMPLE = "value = 1\nprint(value)\n"
PROMPT = "Read sample.py, set value to 2, check it, then answer."
# argv: OUT CMD...: run CMD, write its peak RSS (KiB) to OUT, exit with its status.
PEAK = """import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def script(calls: int) -> list[list[dict[str, Any]]]:
    edit = {"path": "sample.py", "oldText": "value = 1", "newText": "value = 2"}
    return [[{"tool": "read", "args": {"path": "sample.py"}}]] * (calls - 3) + [
        [{"tool": "edit", "args": edit}],
        [{"tool": "bash", "args": {"command": "grep -c 'value = 2' sample.py"}}],
        [{"text": ANSWER, "chunks": 200}],
    ]


class Bench:
    """One model server (its own process) and a scratch directory for the whole measurement."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.server = subprocess.Popen(
            [sys.executable, "-m", "kgent.testing"], stdout=subprocess.PIPE, text=True
        )
        assert self.server.stdout is not None
        self.url = self.server.stdout.readline().strip()
        self.control = httpx.Client(base_url=self.url, timeout=60)
        self.count = 0
        self.repo = tmp / "repo"
        self.repo.mkdir()
        (self.repo / "sample.py").write_text(SAMPLE)
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
        for args in (["init", "-q"], ["add", "sample.py"], ["commit", "-q", "-m", "sample"]):
            subprocess.run([*git, *args], cwd=self.repo, check=True)
        compileall.compile_dir(Path(kgent.__file__).parent, quiet=1)  # as pip does when it installs
        self.client = httpx.Client(timeout=60)  # the warm floor's: connected, as the daemon's is
        self.kgent = str(Path(sys.executable).with_name("kgent"))
        if not Path(self.kgent).exists():
            self.kgent = shutil.which("kgent") or "kgent"

    def close(self) -> None:
        self.control.close()
        self.client.close()
        self.server.terminate()
        self.server.wait(10)

    def base_url(self, wire: str) -> str:
        return f"{self.url}/v1" if wire == "openai" else self.url

    def workspace(self) -> Path:
        """A fresh git work tree holding sample.py (as most workspaces are: Kgent's change tracking uses git)."""
        self.count += 1
        ws = self.tmp / f"ws-{self.count}"
        shutil.copytree(self.repo, ws, symlinks=True)
        return ws

    def env(self, wire: str) -> dict[str, str]:
        # As installed: bytecode cached (pip compiles it; an inherited PYTHONDONTWRITEBYTECODE would make every
        # start compile the whole package from source, which no user's installation does).
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith("_API_KEY") and not k.startswith("KGENT_") and k != "PYTHONDONTWRITEBYTECODE"
        }
        env.update(
            KGENT_STATE_DIR=str(self.tmp / "state"),
            KGENT_PROVIDER=wire,
            KGENT_BASE_URL=self.base_url(wire),
            KGENT_MODEL="bench",
            KGENT_PERMISSION_MODE="full",
            KGENT_MAX_TURNS="1000",
        )
        return env

    def received(self) -> list[float]:
        """When each model request of the current measurement reached the server (wall clock)."""
        return list(self.control.get("/_kgent/requests/received").json()["received"])

    def check(self, what: str, ws: Path, calls: int) -> list[float]:
        received = self.received()
        if len(received) != calls or (ws / "sample.py").read_text() != SAMPLE.replace("1", "2", 1):
            raise SystemExit(
                f"{what}: {len(received)} model calls of {calls}, sample.py: {(ws / 'sample.py').read_text()!r}"
            )
        return received

    def process(self, what: str, cmd: list[str], wire: str, calls: int) -> dict[str, float]:
        """A whole process doing the task: wall s, time to its first model request (ms)."""
        ws = self.workspace()
        self.control.post("/_kgent/reset")
        errors = self.tmp / "stderr.txt"
        with errors.open("w") as err:
            t0, started = time.time(), time.perf_counter()
            proc = subprocess.Popen(cmd, cwd=ws, env=self.env(wire), stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"{what} exited {proc.returncode}: {errors.read_text()[-2000:]}")
        return {
            "s": wall,
            "first_request_ms": (self.check(what, ws, calls)[0] - t0) * 1000,
            "cpu_s": usage.ru_utime
            + usage.ru_stime,  # its children's too (git, the shell): load hardly moves it
        }

    def peak_rss(self, what: str, cmd: list[str], wire: str, calls: int) -> float:
        """Peak RSS (MiB) of one more run of `cmd`, started from a small launcher: Linux keeps a process's peak
        across exec, so a child forked straight from this (large) process would report this one's size."""
        out = self.tmp / "peak.txt"
        self.process(what, [sys.executable, "-S", "-c", PEAK, str(out), *cmd], wire, calls)
        return int(out.read_text()) / 1024

    def floor_cmd(self, wire: str) -> list[str]:
        cmd = [sys.executable, str(Path(floor.__file__)), "--wire", wire, "--base-url", self.base_url(wire)]
        return [*cmd, "--log", str(self.tmp / f"floor-{self.count}.jsonl"), PROMPT]

    def kgent_cmd(self) -> list[str]:
        return [self.kgent, "run", "--json", PROMPT]

    def floor_warm(self, wire: str, calls: int) -> float:
        """The floor agent in this process (its imports warm): seconds per model call."""
        ws = self.workspace()
        self.control.post("/_kgent/reset")
        log = str(self.tmp / f"floor-{self.count}.jsonl")
        started = time.perf_counter()
        stdout, sys.stdout = sys.stdout, open(os.devnull, "w")  # noqa: SIM115 - restored below
        try:
            floor.agent(wire, self.base_url(wire), "bench", str(ws), log, PROMPT, 1000, client=self.client)
        finally:
            sys.stdout.close()
            sys.stdout = stdout
        wall = time.perf_counter() - started
        self.check("floor (warm)", ws, calls)
        return wall / calls

    def daemon(self, wire: str, calls: int, warm_runs: int) -> dict[str, Any]:
        """Spawn → initialize → agent/run at once → run_end; then warm runs in the same daemon (s per call)."""
        t0, started = time.time(), time.perf_counter()
        peak = self.tmp / "daemon-peak.txt"  # the launcher adds ~1 % to spawn → run_end (a python -S start)
        pipe = Pipe([sys.executable, "-S", "-c", PEAK, str(peak), *daemon_command()], self.env(wire))
        pipe.send(INIT)
        pipe.until(0)
        initialize_ms = (time.perf_counter() - started) * 1000
        self.control.post("/_kgent/reset")  # before the first request can reach it: agent/run is not sent yet
        first_s = self._daemon_run(pipe, wire, calls, 1) - started
        first_request_ms = (self.received()[0] - t0) * 1000
        warm = []
        for i in range(warm_runs):
            self.control.post("/_kgent/reset")
            begun = time.perf_counter()
            warm.append((self._daemon_run(pipe, wire, calls, 2 + i) - begun) / calls)
        pipe.send({"jsonrpc": "2.0", "id": 99, "method": "shutdown"})
        pipe.until(99)
        pipe.send({"jsonrpc": "2.0", "method": "exit"})
        assert pipe.proc.stdin is not None
        pipe.proc.stdin.close()
        pipe.proc.wait(30)
        return {
            "first_run_s": first_s,
            "initialize_ms": initialize_ms,
            "first_request_ms": first_request_ms,
            "warm_s_per_call": statistics.median(warm),
            "rss_mib": int(peak.read_text()) / 1024,
        }

    def _daemon_run(self, pipe: Pipe, wire: str, calls: int, msg_id: int) -> float:
        ws = self.workspace()
        params = {"prompt": PROMPT, "workspace": str(ws), "mode": "full"}
        pipe.send({"jsonrpc": "2.0", "id": msg_id, "method": "agent/run", "params": params})
        while True:
            message = pipe.recv()
            if message.get("id") == msg_id and "error" in message:
                raise SystemExit(f"daemon: {message['error']}")
            event = (message.get("params") or {}).get("event") or {}
            if message.get("method") == "agent/event" and event.get("type") == "run_end":
                ended = time.perf_counter()
                if event["status"] != "settled":
                    raise SystemExit(f"daemon run: {event}")
                self.check("daemon", ws, calls)
                return ended


def med(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def measure(bench: Bench, wire: str, sizes: list[int], repeats: int) -> dict[str, Any]:
    out: dict[str, Any] = {"run": {}, "first_request_ms": {"floor": [], "kgent": []}}
    for calls in sizes:
        bench.control.post("/_kgent/script", json=script(calls))
        rows: dict[str, list[dict[str, float]]] = {"floor": [], "kgent": []}
        for _ in range(repeats):  # interleaved, so drift hits both alike
            rows["floor"].append(bench.process("floor", bench.floor_cmd(wire), wire, calls))
            rows["kgent"].append(bench.process("kgent run", bench.kgent_cmd(), wire, calls))
        fields = ("s", "first_request_ms", "cpu_s")
        out["run"][calls] = {who: {f: med(r, f) for f in fields} for who, r in rows.items()}
        for who, r in rows.items():
            out["first_request_ms"][who] += [x["first_request_ms"] for x in r]
        out["run"][calls]["floor"]["rss_mib"] = bench.peak_rss("floor", bench.floor_cmd(wire), wire, calls)
        out["run"][calls]["kgent"]["rss_mib"] = bench.peak_rss("kgent run", bench.kgent_cmd(), wire, calls)
    calls = sizes[0]
    bench.control.post("/_kgent/script", json=script(calls))
    floors, daemons = [], []
    for _ in range(repeats):
        floors.append(
            {
                "s": bench.process("floor", bench.floor_cmd(wire), wire, calls)["s"],
                "warm_s_per_call": bench.floor_warm(wire, calls),
            }
        )
        daemons.append(bench.daemon(wire, calls, warm_runs=3))
    out["daemon"] = {
        "calls": calls,
        "floor_s": med(floors, "s"),
        "floor_warm_s_per_call": med(floors, "warm_s_per_call"),
        **{k: med(daemons, k) for k in daemons[0]},
    }
    return out


def ratios(m: dict[str, Any]) -> dict[str, float]:
    """Every goal's ratio (kgent / floor). Time to the first request does not depend on the task's length: its
    ratio is that of the medians over all runs of every length."""
    r: dict[str, float] = {}
    for calls, row in m["run"].items():
        f, k = row["floor"], row["kgent"]
        r[f"run@{calls}"] = k["s"] / f["s"]
        r[f"peak_rss@{calls}"] = k["rss_mib"] / f["rss_mib"]
    first = m["first_request_ms"]
    r["first_request"] = statistics.median(first["kgent"]) / statistics.median(first["floor"])
    d = m["daemon"]
    r[f"daemon_first_run@{d['calls']}"] = d["first_run_s"] / d["floor_s"]
    r[f"daemon_warm_per_call@{d['calls']}"] = d["warm_s_per_call"] / d["floor_warm_s_per_call"]
    return r


def goal(name: str) -> float:
    return GOALS[name.split("@")[0]]


def verdict(value: float, limit: float) -> str:
    return f"{value:>5.2f}× [≤{limit}] {'ok' if value <= limit else 'MISSED'}"


def report(wire: str, m: dict[str, Any], repeats: int) -> None:
    r = ratios(m)
    print(f"\n{wire} wire: ratios to the floor (same run, medians of {repeats}; goal in brackets)")
    for calls, row in m["run"].items():
        f, k = row["floor"], row["kgent"]
        print(
            f"  {calls:>4} calls  kgent run {verdict(r[f'run@{calls}'], GOALS['run'])}"
            f"   peak RSS {verdict(r[f'peak_rss@{calls}'], GOALS['peak_rss'])}"
            f"   (CPU time {k['cpu_s'] / f['cpu_s']:.2f}×)"
        )
        print(
            f"              floor {f['s']:.2f} s (CPU {f['cpu_s']:.2f} s), {f['rss_mib']:.0f} MiB, first request"
            f" {f['first_request_ms']:.0f} ms; kgent {k['s']:.2f} s (CPU {k['cpu_s']:.2f} s), {k['rss_mib']:.0f} MiB,"
            f" first request {k['first_request_ms']:.0f} ms"
        )
    first = m["first_request_ms"]
    print(
        f"  time to the first model request {verdict(r['first_request'], GOALS['first_request'])}"
        f"   (medians of all {len(first['kgent'])} runs: floor {statistics.median(first['floor']):.0f} ms,"
        f" kgent {statistics.median(first['kgent']):.0f} ms)"
    )
    d = m["daemon"]
    n = d["calls"]
    print(
        f"  daemon, {n} calls: spawn → first run_end {verdict(r[f'daemon_first_run@{n}'], GOALS['daemon_first_run'])}"
        f"   warm run per call {verdict(r[f'daemon_warm_per_call@{n}'], GOALS['daemon_warm_per_call'])}"
    )
    print(
        f"              floor {d['floor_s']:.2f} s, warm {d['floor_warm_s_per_call'] * 1000:.2f} ms/call; daemon"
        f" {d['first_run_s']:.2f} s (initialize {d['initialize_ms']:.0f} ms, first request"
        f" {d['first_request_ms']:.0f} ms), warm {d['warm_s_per_call'] * 1000:.2f} ms/call, {d['rss_mib']:.0f} MiB"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls", type=int, nargs="+", default=[23, 103, 403])
    parser.add_argument("--wires", nargs="+", default=["openai", "anthropic"])
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        bench = Bench(Path(tmp))
        try:
            for wire in args.wires:
                results[wire] = measure(bench, wire, args.calls, args.repeats)
                report(wire, results[wire], args.repeats)
        finally:
            bench.close()
    every = {f"{w}:{k}": v for w, m in results.items() for k, v in ratios(m).items()}
    missed = {k: v for k, v in every.items() if v > goal(k.split(":", 1)[1])}
    print(f"\n{len(every) - len(missed)} of {len(every)} ratios within their goals", end="")
    print("; missed: " + ", ".join(f"{k} {v:.2f}×" for k, v in missed.items()) if missed else "")
    record(
        RESULTS,
        {
            "repeats": args.repeats,
            "goals": GOALS,
            "ratios": {k: round(v, 3) for k, v in every.items()},
            "measured": results,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
