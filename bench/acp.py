"""ACP benchmark: `kgent acp` as an ACP client sees it, beside the stdio daemon measured in the same run.

spawn → `initialize` answered, and spawn → the first streamed text (`agent_message_chunk` over ACP after
`initialize`, `session/new`, `session/prompt`; the first `message_delta` over the daemon after `initialize`,
`agent/run`), on the scripted provider. Floor: spawning `python -c pass`. Interleaved, so drift hits all alike.

    .venv/bin/python bench/acp.py [--repeats 11]

Writes bench/results/acp.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from record import record

from daemon import INIT, Pipe, env_for
from kgent.testing.daemon_client import daemon_command

RESULTS = Path(__file__).parent / "results" / "acp.json"
ACP = [sys.executable, "-m", "kgent", "acp"]


class Lines:
    """A blocking ACP client on raw pipes (newline-delimited JSON)."""

    def __init__(self, cmd: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def recv(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise EOFError("the agent closed its stdout")
        message: dict[str, Any] = json.loads(line)
        return message

    def until(self, done: Any) -> dict[str, Any]:
        while not done(message := self.recv()):
            pass
        return message

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


def acp_once(env: dict[str, str], workspace: str) -> tuple[float, float]:
    started = time.perf_counter()
    p = Lines(ACP, env)
    p.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    p.until(lambda m: m.get("id") == 0)
    init_ms = (time.perf_counter() - started) * 1000
    p.send(
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": workspace, "mcpServers": []}}
    )
    session = p.until(lambda m: m.get("id") == 1)["result"]["sessionId"]
    prompt = [{"type": "text", "text": "hi"}]
    p.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": prompt},
        }
    )
    p.until(lambda m: (m.get("params") or {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk")
    chunk_ms = (time.perf_counter() - started) * 1000
    p.until(lambda m: m.get("id") == 2)
    p.close()
    return init_ms, chunk_ms


def daemon_once(env: dict[str, str], workspace: str) -> tuple[float, float]:
    started = time.perf_counter()
    p = Pipe(daemon_command(), env)
    p.send(INIT)
    p.until(0)
    init_ms = (time.perf_counter() - started) * 1000
    p.send(
        {"jsonrpc": "2.0", "id": 1, "method": "agent/run", "params": {"prompt": "hi", "workspace": workspace}}
    )
    while True:
        m = p.recv()
        if m.get("method") == "agent/event" and m["params"]["event"]["type"] == "message_delta":
            break
    delta_ms = (time.perf_counter() - started) * 1000
    while not (m.get("method") == "agent/event" and m["params"]["event"]["type"] == "run_end"):
        m = p.recv()
    p.close()
    return init_ms, delta_ms


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args(argv)
    rows: dict[str, list[float]] = {
        k: []
        for k in (
            "python -c pass",
            "acp initialize",
            "acp first chunk",
            "daemon initialize",
            "daemon first delta",
        )
    }
    with tempfile.TemporaryDirectory() as tmp:
        env = env_for(str(Path(tmp) / "state"), KGENT_PROVIDER="scripted", KGENT_MODEL="hello")
        for _ in range(args.repeats):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            rows["python -c pass"].append((time.perf_counter() - started) * 1000)
            init_ms, chunk_ms = acp_once(env, tmp)
            rows["acp initialize"].append(init_ms)
            rows["acp first chunk"].append(chunk_ms)
            init_ms, delta_ms = daemon_once(env, tmp)
            rows["daemon initialize"].append(init_ms)
            rows["daemon first delta"].append(delta_ms)
    med = {k: round(statistics.median(v), 1) for k, v in rows.items()}
    print(f"spawn → …, median of {args.repeats} (scripted provider):")
    for name, value in med.items():
        print(f"  {name:<20} {value:>8.1f} ms")
    record(
        RESULTS,
        {
            "repeats": args.repeats,
            "median_ms": med,
            "min_ms": {k: round(min(v), 1) for k, v in rows.items()},
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
