"""Session churn: one daemon process (the shared Service on the daemon's run port, frames discarded) serves many
short sessions one after another — each a new session whose run asks twice and is answered `allow_always` (so it
leaves a session rule) — and its memory must stay flat. Measured after a warm-up and again after `--sessions` more:
RSS and the Python heap (tracemalloc), per session. Floor: the same churn with the kernel's per-session pruning
turned off (the kernel before it forgot sessions), over `--floor-sessions`.

    .venv/bin/python bench/churn.py [--sessions 10000] [--floor-sessions 2000]   (KGENT_CHURN_WARM_UP=1200)

The scripted provider keeps every request it was sent (for tests); the churn clears that record after each batch, so
what remains is the daemon's own memory.

Writes bench/results/churn.json.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from record import record

RESULTS = Path(__file__).parent / "results" / "churn.json"
WARM_UP = int(os.environ.get("KGENT_CHURN_WARM_UP", "1200"))  # past the service's memory of ended runs (1024)
CONCURRENCY = 32  # sessions at a time (each its own)


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def churn(sessions: int, *, prune: bool, workspace: Path) -> dict[str, Any]:
    from kgent.core.events import PermissionRequest
    from kgent.daemon.port import DaemonPort
    from kgent.kernel import AgentKernel
    from kgent.service import wire as W
    from kgent.service.handshake import Settings
    from kgent.service.runs import Decision, RunRef
    from kgent.service.service import Service

    class Port(DaemonPort):
        """The daemon's port with a client that answers every prompt `allow_always` at once."""

        async def ask(self, ref: RunRef, request: PermissionRequest) -> Decision:
            return Decision("allow_always")

    sent = [0]

    def count(body: bytes) -> None:
        sent[0] += 1

    proto: Any = SimpleNamespace(frames=SimpleNamespace(send_body=count))
    svc = Service({"KGENT_PROVIDER": "scripted", "KGENT_MODEL": "two-writes"}, Settings(), Port(proto))
    original = AgentKernel._ended
    if not prune:  # the kernel as it was: nothing forgotten when a session's last run ends

        def keep(self: AgentKernel, run: Any, release: Any) -> None:
            live, rules = dict(self._live), dict(self.rules.sessions)
            workspaces = dict(self.rules.workspaces)
            original(self, run, release)
            self._live.update(live)
            self.rules.sessions.update(rules)
            self.rules.workspaces.update(workspaces)

        AgentKernel._ended = keep  # type: ignore[method-assign]
    try:

        async def one() -> None:
            handle = await svc.start_run(W.RunParams.parse({"prompt": "write", "workspace": str(workspace)}))
            handle.start()
            await handle.ended.wait()
            assert handle.status == "settled", handle.status

        async def many(n: int) -> None:
            for start in range(0, n, CONCURRENCY):
                await asyncio.gather(*(one() for _ in range(min(CONCURRENCY, n - start))))
                for provider in svc.providers._cache.values():  # the scripted provider records every request
                    recorded = getattr(
                        provider, "requests", None
                    )  # (a test double's memory, not the daemon's)
                    if isinstance(recorded, list):
                        recorded.clear()

        await many(WARM_UP)
        gc.collect()
        rss0, (heap0, _) = rss_kib(), tracemalloc.get_traced_memory()
        started = time.perf_counter()
        await many(sessions)
        elapsed = time.perf_counter() - started
        await asyncio.sleep(0)  # the last run's done callbacks
        gc.collect()
        rss1, (heap1, _) = rss_kib(), tracemalloc.get_traced_memory()
        kernel = svc._kernel
        assert kernel is not None
        result = {
            "sessions": sessions,
            "rss_kib_before": rss0,
            "rss_kib_after": rss1,
            "heap_bytes_before": heap0,
            "heap_bytes_after": heap1,
            "heap_bytes_per_session": (heap1 - heap0) / sessions,
            "rss_bytes_per_session": (rss1 - rss0) * 1024 / sessions,
            "live_entries": len(kernel._live),
            "rules_entries": len(kernel.rules.sessions) + len(kernel.rules.workspaces),
            "ms_per_session": elapsed * 1000 / sessions,
            "frames": sent[0],
        }
        await svc.close()
        return result
    finally:
        AgentKernel._ended = original  # type: ignore[method-assign]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--floor-sessions", type=int, default=2_000)
    args = parser.parse_args()
    base = Path("/dev/shm") if Path("/dev/shm").is_dir() else None  # fsync on tmpfs costs nothing
    with tempfile.TemporaryDirectory(prefix="kgent-churn-", dir=base) as tmp:
        os.environ["KGENT_STATE_DIR"] = str(Path(tmp) / "state")
        tracemalloc.start()
        rows = {}
        for name, prune, n in (("pruned", True, args.sessions), ("floor", False, args.floor_sessions)):
            if n == 0:
                continue
            workspace = Path(tmp) / name
            workspace.mkdir()
            rows[name] = asyncio.run(churn(n, prune=prune, workspace=workspace))
    now, floor = rows["pruned"], rows.get("floor", rows["pruned"])
    print(
        f"session churn in one daemon process (warm-up {WARM_UP}, then N sessions of two approved writes each, "
        f"{CONCURRENCY} at a time):"
    )
    for name, row in rows.items():
        print(
            f"  {name:7} N={row['sessions']:>6}  heap {row['heap_bytes_before'] / 1e6:7.2f} → "
            f"{row['heap_bytes_after'] / 1e6:7.2f} MB ({row['heap_bytes_per_session']:8.1f} B/session)  "
            f"RSS {row['rss_kib_before'] / 1024:7.1f} → {row['rss_kib_after'] / 1024:7.1f} MiB "
            f"({row['rss_bytes_per_session']:8.1f} B/session)  live/rules left {row['live_entries']}/"
            f"{row['rules_entries']}  {row['ms_per_session']:.2f} ms/session (wall)"
        )
    ratio = (
        now["heap_bytes_per_session"] / floor["heap_bytes_per_session"]
        if floor["heap_bytes_per_session"]
        else 0
    )
    if "floor" in rows:
        print(f"  heap growth per session: {ratio:.3f}× the unpruned kernel's")
    record(RESULTS, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
