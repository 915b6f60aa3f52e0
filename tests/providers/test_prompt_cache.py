"""Prompt caching over real HTTP, turn after turn, against the local model server's emulation of each vendor's cache
accounting (kgent.testing.cache): where the Anthropic breakpoints are, that every request starts with the bytes of
the one before it (resumed sessions included), and that each turn reads what the previous one cached."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kgent.context.compaction import compact_session
from kgent.context.summarizing import SummarizingProvider
from kgent.core.events import RunResult, UsageEvent
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.streaming import HTTPProvider
from kgent.session.memory import InMemorySessionStore
from kgent.testing import ModelServer
from kgent.testing.cache import anthropic_blocks

READ = {"tool": "read", "args": {"path": "notes.txt"}}
SCRIPT = [
    [{"text": "Reading the notes."}, READ],
    [
        {"text": "Reading them all again, in parallel."},
        *([READ] * 25),
    ],  # 50 new blocks: past the 20-block lookback
    [{"text": "Once more."}, READ],
    [{"text": "Done: the notes are read."}],
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("".join(f"note {i}: {'lorem ipsum ' * 6}\n" for i in range(12)))
    return ws.resolve()


@pytest.fixture
def run_on(model_server: ModelServer, make_provider: Callable[..., HTTPProvider], workspace: Path):
    """`await run_on(wire, prompt, session_id=None, store=...)`: one run (mode full) through a fresh provider and
    kernel, as a new process would; returns (result, usage events)."""
    model_server.script = SCRIPT

    async def run(
        wire: str, prompt: str, *, store: InMemorySessionStore, session_id: str | None = None
    ) -> tuple[RunResult, list[UsageEvent]]:
        model = "claude-sonnet-4-5" if wire == "anthropic" else "deepseek-chat"
        kernel = AgentKernel(make_provider(wire, model=model), store=store, config=KernelConfig(mode="full"))
        run = kernel.create_run(prompt, workspace=workspace, session_id=session_id)
        usage = [e async for e in run if isinstance(e, UsageEvent)]
        return await run.result(), usage

    return run


def marks(body: dict[str, Any]) -> dict[str, list[Any]]:
    """Where a Messages request has cache_control: tool indices, system block indices, (message, block) pairs."""
    return {
        "tools": [i for i, t in enumerate(body.get("tools") or ()) if "cache_control" in t],
        "system": [i for i, b in enumerate(body.get("system") or ()) if "cache_control" in b],
        "messages": [
            (m, b)
            for m, message in enumerate(body["messages"])
            for b, block in enumerate(message["content"])
            if "cache_control" in block
        ],
    }


def reads(events: list[UsageEvent]) -> list[tuple[int, int, int]]:
    return [(e.turn["inputTokens"], e.turn["cacheReadTokens"], e.turn["cacheWriteTokens"]) for e in events]


async def test_anthropic_breakpoints_turn_after_turn(run_on, model_server: ModelServer) -> None:
    store = InMemorySessionStore()
    result, usage = await run_on("anthropic", "read the notes", store=store)
    assert result.status == "settled" and result.turns == 4
    bodies = [r.body for r in model_server.requests]
    for n, body in enumerate(bodies):
        where = marks(body)
        assert sum(map(len, where.values())) <= 4  # the API's limit
        assert where["tools"] == [len(body["tools"]) - 1] and where["system"] == [0]
        last = len(body["messages"]) - 1
        expected = [] if n == 0 else [len(bodies[n - 1]["messages"]) - 1]  # the previous request's newest
        expected.append(last)
        assert [m for m, _ in where["messages"]] == expected
        assert all(
            b == len(body["messages"][m]["content"]) - 1 for m, b in where["messages"]
        )  # the last block
        assert all(body["messages"][m]["role"] == "user" for m, _ in where["messages"])
    # Turn one writes tools + system + the prompt; every later turn reads all the one before it read and wrote,
    # even after the turn of 25 parallel calls (its new blocks are past the API's lookback).
    (in1, read1, write1), *rest = reads(usage)
    assert read1 == 0 and write1 > 1024
    previous = read1 + write1
    for uncached, read, write in rest:
        assert read == previous and write > 0 and uncached < 128  # plain input: the framing only
        previous = read + write


async def test_anthropic_resumed_session_keeps_hitting_and_compaction_starts_a_new_prefix(
    run_on, model_server: ModelServer, make_provider
) -> None:
    store = InMemorySessionStore()
    first, usage1 = await run_on("anthropic", "read the notes", store=store)
    last_first = model_server.requests[-1].body
    second, usage2 = await run_on("anthropic", "and again", store=store, session_id=first.session_id)
    resumed = model_server.requests[len(usage1)].body
    # Same bytes for the same history: the resumed request starts with every block of the last one (marks aside).
    old = [b for b, _ in anthropic_blocks(last_first)]
    assert [b for b, _ in anthropic_blocks(resumed)][: len(old)] == old
    _, read, _ = reads(usage2)[0]
    _, last_read, last_write = reads(usage1)[-1]
    assert read == last_read + last_write  # the resumed run's first call reads all the last call cached

    provider = SummarizingProvider(make_provider("anthropic", model="claude-sonnet-4-5"))
    compacted = await compact_session(store, provider, first.session_id, keep_recent_tokens=200)
    assert compacted is not None
    before = len(model_server.requests)
    _, usage3 = await run_on("anthropic", "after the checkpoint", store=store, session_id=first.session_id)
    after = model_server.requests[before].body
    assert after["messages"][0]["content"][0]["text"].startswith("The conversation history before this point")
    assert marks(after)["messages"][-1][0] == len(after["messages"]) - 1
    (_, read_a, write_a), (_, read_b, _), *_ = reads(usage3)
    tools_and_system = sum(len(b) for b, _ in anthropic_blocks(after)[: len(after["tools"]) + 1]) // 4
    assert (
        read_a == tools_and_system
    )  # a new conversation prefix: only the tools and the system prompt are cached
    assert read_b == read_a + write_a  # and the next turn reads the new prefix


async def test_openai_wire_prefix_is_byte_stable_and_deepseek_hits(run_on, model_server: ModelServer) -> None:
    store = InMemorySessionStore()
    first, usage1 = await run_on("openai", "read the notes", store=store)
    _, usage2 = await run_on("openai", "and again", store=store, session_id=first.session_id)
    raws = [r.raw for r in model_server.requests]
    assert len(raws) == len(usage1) + len(usage2) == 8
    assert all(b"prompt_cache_key" not in raw for raw in raws)  # a local server, not api.openai.com
    for k in range(1, len(raws)):
        # Each request, the resumed run's first included, is the one before it plus new messages: `…]}` → `…,{…}]}`.
        assert raws[k].startswith(raws[k - 1][:-2] + b","), k
    # So each call reads the previous call's whole prompt from DeepSeek's cache, but for its last partial
    # 64-token unit (the emulated prompt: the tools, then the messages).
    prompts = [len(compact(b.get("tools") or []) + compact(b["messages"])) for b in map(json.loads, raws)]
    for k, (_, read, write) in enumerate(reads(usage1 + usage2)):
        assert write == 0 and read == (0 if k == 0 else (prompts[k - 1] - 1) // 256 * 64), k


def compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_instructions_keep_the_prefix_stable_and_cached(
    wire: str,
    run_on,
    model_server: ModelServer,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the user's and the project's AGENTS.md loaded and a nested one found mid-run, each request still starts
    with the bytes of the one before it, and from call 3 on at least 0.9 of the input is billed at the cached rate."""
    user = tmp_path / "user-config"
    user.mkdir()
    monkeypatch.setenv("KGENT_CONFIG_DIR", str(user))
    (user / "AGENTS.md").write_text("Prefer small diffs. " * 20 + "\n")
    (workspace / "AGENTS.md").write_text("Run the tests after each change. " * 20 + "\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "AGENTS.md").write_text("In sub/, keep functions pure. " * 20 + "\n")
    (workspace / "sub" / "f.txt").write_text("f\n")
    model_server.script = [
        [{"text": "Reading."}, READ],
        [{"text": "Now sub."}, {"tool": "read", "args": {"path": "sub/f.txt"}}],
        *[[{"text": f"Again {i}."}, READ] for i in range(8)],
        [{"text": "Done."}],
    ]
    store = InMemorySessionStore()
    first, usage = await run_on(wire, "read the notes", store=store)
    assert first.status == "settled"
    bodies = [r.body for r in model_server.requests]
    assert "Prefer small diffs" in json.dumps(bodies[0]) and "keep functions pure" in json.dumps(bodies[-1])
    if wire == "openai":
        raws = [r.raw for r in model_server.requests]
        for k in range(1, len(raws)):
            assert raws[k].startswith(raws[k - 1][:-2] + b","), k
    else:
        for k in range(1, len(bodies)):
            old = [b for b, _ in anthropic_blocks(bodies[k - 1])]
            assert [b for b, _ in anthropic_blocks(bodies[k])][: len(old)] == old, k
    turns = reads(usage)[2:]
    cached = sum(read for _, read, _ in turns)
    total = sum(plain + read + write for plain, read, write in turns)
    assert cached / total >= 0.9, (cached, total)
