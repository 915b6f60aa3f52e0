"""Session benchmark: resume a 10 000-entry JSONL session to its first provider request, append cost at 10 vs
10 000 entries, and listing a workspace of many sessions.

Resume: a fresh JsonlSessionStore (nothing cached, as in a new process) and a kernel; the clock runs from
`create_run(session_id=...)` until the provider's `stream` is called. Two shapes: a realistic session that was
compacted along the way (a checkpoint every 100 entries) and the worst case, never compacted (10 000 entries all
projected; auto-compaction off). Append: one ~1 KB entry per batch (write + fsync), alternating between the two
sessions, median per append. Medians of `--repeats`.

    .venv/bin/python bench/sessions.py [--entries 10000] [--repeats 7] [--appends 300]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from record import record

from kgent.core.messages import (
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    message_to_dict,
)
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.base import ProviderRequest, StreamDone, StreamEvent
from kgent.session import codec
from kgent.session.entries import new_entry
from kgent.session.jsonl import JsonlSessionStore
from kgent.session.paths import normalize_workspace, workspace_key

RESULTS = Path(__file__).parent / "results" / "sessions.json"
GOALS = {"resume_ms": 150, "append_ratio_10k_vs_10": 1.2}


class FirstRequest:
    """A provider that notes when it is first asked, then answers at once."""

    name = "bench"
    model = "bench"

    def __init__(self) -> None:
        self.first: float | None = None
        self.messages = 0

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        if self.first is None:
            self.first = time.perf_counter()
            self.messages = len(request.messages)
        yield StreamDone(AssistantMessage(text="ok", usage=Usage(input_tokens=1000, output_tokens=1)))

    async def aclose(self) -> None:
        return None


def session_file(path: Path, workspace: str, entries: int, checkpoint_every: int | None) -> None:
    """Write a realistic session: turns of a prompt, tool calls with ~800-char results, an answer; optionally a
    checkpoint every `checkpoint_every` entries that keeps the current turn."""
    lines = [codec.encode(codec.header(path.stem, workspace, "2025-01-01T00:00:00.000Z"))]
    parent = None
    count = last_checkpoint = 0
    turn_start = None

    def add(type_: str, **data: Any) -> str:
        nonlocal parent, count
        e = new_entry(type_, parent, **data)
        lines.append(codec.encode(e.to_dict()))
        parent = e.id
        count += 1
        return e.id

    add("config", mode="ask", provider="bench", model="bench")
    n = 0
    while count < entries:
        turn_start = add(
            "message", message=message_to_dict(UserMessage(text=f"task {n}: " + "please fix " * 10))
        )
        for k in range(4):
            if count >= entries:
                break
            call = ToolCall(id=f"c{n}_{k}", name="read", arguments={"path": f"src/module_{n}_{k}.py"})
            add(
                "message",
                message=message_to_dict(
                    AssistantMessage(
                        text="Let me look at the module. " * 4,
                        tool_calls=(call,),
                        stop_reason="tool_use",
                        usage=Usage(input_tokens=20_000, output_tokens=60),
                    )
                ),
            )
            add(
                "message",
                message=message_to_dict(
                    ToolResultMessage(
                        tool_call_id=call.id, name="read", content="def f(x):\n    return x + 1\n" * 28
                    )
                ),
            )
            if checkpoint_every and count - last_checkpoint >= checkpoint_every:
                last_checkpoint = count
                add(
                    "compaction",
                    summary="## Goal\n- bench\n" + "- detail\n" * 40,
                    coveredEntryIds=[],
                    firstKeptEntryId=turn_start,
                    previousCheckpointId=None,
                    readFiles=[],
                    modifiedFiles=[],
                    tokensBefore=100_000,
                    tokensAfter=10_000,
                    trigger="automatic",
                )
        add(
            "message",
            message=message_to_dict(
                AssistantMessage(
                    text=f"Done with task {n}.", usage=Usage(input_tokens=20_000, output_tokens=10)
                )
            ),
        )
        n += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))


async def resume_once(root: Path, sid: str, workspace: Path, auto_compact: bool) -> tuple[float, int]:
    provider = FirstRequest()
    kernel = AgentKernel(
        provider, store=JsonlSessionStore(root), config=KernelConfig(mode="full", auto_compact=auto_compact)
    )
    started = time.perf_counter()
    run = kernel.create_run("continue", workspace=workspace, session_id=sid)
    async for _ in run:
        pass
    result = await run.result()
    await kernel.aclose()
    if result.status != "settled" or provider.first is None:
        raise SystemExit(f"resume failed: {result.status} {result.error}")
    return (provider.first - started) * 1000, provider.messages


def measure_resume(
    tmp: Path, workspace: Path, entries: int, repeats: int, checkpoint_every: int | None
) -> dict:
    ws = normalize_workspace(workspace)
    master = tmp / "master.jsonl"
    session_file(master, ws, entries, checkpoint_every)
    root = tmp / "sessions"
    target = root / workspace_key(ws) / "bench.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    times, sent = [], 0
    for i in range(repeats + 1):
        shutil.copyfile(master, target)  # the same file each time
        ms, sent = asyncio.run(
            resume_once(root, "bench", workspace, auto_compact=checkpoint_every is not None)
        )
        if i:  # the first one warms imports and caches
            times.append(ms)
    return {
        "entries": entries,
        "checkpoint_every": checkpoint_every,
        "file_mib": round(master.stat().st_size / 2**20, 2),
        "messages_sent": sent,
        "resume_ms": round(statistics.median(times), 1),
        "resume_ms_min": round(min(times), 1),
    }


async def measure_append(tmp: Path, workspace: Path, sizes: tuple[int, int], appends: int) -> dict:
    ws = normalize_workspace(workspace)
    root = tmp / "append"
    leaves = {}
    for n in sizes:
        path = root / workspace_key(ws) / f"s{n}.jsonl"
        session_file(path, ws, n, None)
    store = JsonlSessionStore(root)
    for n in sizes:
        leaves[n] = (await store.load(f"s{n}")).leaf_id
    samples: dict[int, list[float]] = {n: [] for n in sizes}
    payload = "x" * 900
    for i in range(appends):
        for n in sizes if i % 2 == 0 else tuple(reversed(sizes)):
            e = new_entry("message", leaves[n], message={"role": "user", "text": payload})
            t = time.perf_counter()
            await store.append(f"s{n}", [e])
            samples[n].append((time.perf_counter() - t) * 1000)
            leaves[n] = e.id
    await store.aclose()
    small, big = sizes
    med = {n: statistics.median(samples[n]) for n in sizes}
    return {
        "append_ms": {str(n): round(med[n], 3) for n in sizes},
        "append_ms_p90": {str(n): round(statistics.quantiles(samples[n], n=10)[-1], 3) for n in sizes},
        "ratio": round(med[big] / med[small], 3),
        "appends": appends,
    }


async def measure_list(tmp: Path, workspace: Path, sessions: int, entries: int) -> dict:
    ws = normalize_workspace(workspace)
    root = tmp / "list"
    for i in range(sessions):
        session_file(root / workspace_key(ws) / f"l{i}.jsonl", ws, entries, None)
    t = time.perf_counter()
    cold = await JsonlSessionStore(root).list(ws)
    cold_ms = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    warm = await JsonlSessionStore(root).list(ws)
    warm_ms = (time.perf_counter() - t) * 1000
    assert len(cold) == len(warm) == sessions
    return {
        "sessions": sessions,
        "entries_each": entries,
        "cold_ms": round(cold_ms, 1),
        "cached_ms": round(warm_ms, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--appends", type=int, default=300)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="kgent-bench-sessions-") as tmp_name:
        tmp = Path(tmp_name)
        workspace = tmp / "ws"
        workspace.mkdir()
        resume = [
            measure_resume(tmp / "a", workspace, args.entries, args.repeats, 100),
            measure_resume(tmp / "b", workspace, args.entries, args.repeats, None),
        ]
        append = asyncio.run(measure_append(tmp, workspace, (10, args.entries), args.appends))
        listing = asyncio.run(measure_list(tmp, workspace, 200, 200))

    for r in resume:
        shape = f"checkpoint every {r['checkpoint_every']}" if r["checkpoint_every"] else "never compacted"
        print(
            f"resume {r['entries']} entries ({shape}, {r['file_mib']} MiB) to first request: "
            f"{r['resume_ms']:.1f} ms median ({r['messages_sent']} messages sent)"
        )
    a = append["append_ms"]
    print(
        f"append (write + fsync): {a['10']:.3f} ms at 10 entries, {a[str(args.entries)]:.3f} ms at "
        f"{args.entries} entries: {append['ratio']}×"
    )
    print(
        f"list {listing['sessions']} sessions of {listing['entries_each']} entries: "
        f"{listing['cold_ms']} ms cold, {listing['cached_ms']} ms with the index"
    )

    record(
        RESULTS,
        {
            "goals": GOALS,
            "resume": resume,
            "append": append,
            "list": listing,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
