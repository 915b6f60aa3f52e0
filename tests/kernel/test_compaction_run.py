"""`AgentKernel.compact_run`: a compaction as a run of its own, with the lifecycle of every run — run_start, the
compaction's events, one message_delta, run_end; the session's live run meanwhile; a failed or cancelled summary
ends it failed or cancelled with nothing written (the summaries over real HTTP to the local model server)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import collect, eventually
from kgent.core.errors import RunStateError
from kgent.core.events import CompactionEvent, MessageDelta, RunEnd, RunStart
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.base import ProviderConfig
from kgent.providers.openai import OpenAIProvider
from kgent.providers.scripted import ScriptedProvider
from kgent.session.jsonl import JsonlSessionStore
from kgent.testing import ModelServer

LONG = [{"text": "lorem ipsum dolor sit amet " * 5000}]  # past the 20k tokens a compaction keeps


async def _session(kernel: AgentKernel, workspace: Path) -> str:
    first = kernel.create_run("Write a lot", workspace=workspace)
    await collect(first)
    sid = (await first.result()).session_id
    again = kernel.create_run("Short one", workspace=workspace, session_id=sid)
    await collect(again)
    return sid


async def test_a_compaction_run_has_every_runs_lifecycle(workspace: Path) -> None:
    kernel = AgentKernel(ScriptedProvider([LONG, [{"text": "Short."}]]), config=KernelConfig(mode="ask"))
    sid = await _session(kernel, workspace)
    run = kernel.compact_run(sid, str(workspace), focus="keep the names", prompt="/compact keep the names")
    assert kernel.live_run(sid) is run
    with pytest.raises(RunStateError):  # the session's live run: no other starts meanwhile
        kernel.create_run("x", workspace=workspace, session_id=sid)
    events = await collect(run)
    result = await run.result()
    assert [e.type for e in events] == ["run_start", "compaction", "compaction", "message_delta", "run_end"]
    start, done = events[0], events[2]
    assert isinstance(start, RunStart) and (start.prompt, start.session_id) == (
        "/compact keep the names",
        sid,
    )
    assert isinstance(done, CompactionEvent) and done.status == "completed" and done.entry_id is not None
    assert (result.status, result.stop_reason) == ("settled", "end") and "Compacted" in result.text
    assert isinstance(events[3], MessageDelta) and events[3].delta == result.text
    assert result.usage["text"] == "0 in / 0 out tokens"  # the summary's call is the compaction's
    tree = await kernel.store.load(sid)
    assert tree.leaf_id == done.entry_id and tree.entries[done.entry_id].type == "compaction"
    assert kernel.live_run(sid) is None
    nothing = kernel.compact_run(sid, str(workspace))  # right after one: too little left to compact
    await collect(nothing)
    assert (await nothing.result()).text == "Nothing to compact yet."
    await kernel.aclose()


@pytest.fixture
def server() -> Iterator[ModelServer]:
    s = ModelServer([LONG, [{"text": "Short."}]]).start()
    try:
        yield s
    finally:
        s.stop()


def _kernel(server: ModelServer, tmp_path: Path) -> AgentKernel:
    config = ProviderConfig(
        provider="openai", base_url=server.base_url("openai"), model="test-model", api_key="sk-test"
    )
    return AgentKernel(
        OpenAIProvider(config), store=JsonlSessionStore(tmp_path / "sessions"), config=KernelConfig()
    )


async def test_a_failed_summary_fails_the_run_and_writes_nothing(
    server: ModelServer, tmp_path: Path, workspace: Path
) -> None:
    kernel = _kernel(server, tmp_path)
    sid = await _session(kernel, workspace)
    before = dict((await kernel.store.load(sid)).entries)
    server.script = [[{"text": "Just prose, not the summary's sections."}]]
    run = kernel.compact_run(sid, str(workspace))
    events = await collect(run)
    result = await run.result()
    failed = [e for e in events if isinstance(e, CompactionEvent)][-1]
    assert failed.status == "failed" and failed.error
    assert (result.status, result.error and result.error["code"]) == ("failed", "compaction_failed")
    assert isinstance(events[-1], RunEnd)
    assert dict((await kernel.store.load(sid)).entries) == before
    await kernel.aclose()


async def test_cancelling_stops_the_summary(server: ModelServer, tmp_path: Path, workspace: Path) -> None:
    kernel = _kernel(server, tmp_path)
    sid = await _session(kernel, workspace)
    asked = len(server.requests)
    server.script = [[{"sleep": 60}, {"text": "never sent"}]]
    run = kernel.compact_run(sid, str(workspace))
    events: list[Any] = []

    async def consume() -> None:
        async for event in run:
            events.append(event)

    consumer = asyncio.create_task(consume())

    await eventually(lambda: len(server.requests) > asked, "the summary's request")
    run.cancel()
    await asyncio.wait_for(consumer, 30)
    result = await run.result()
    assert (result.status, result.stop_reason) == ("cancelled", "cancelled")
    assert [e.status for e in events if isinstance(e, CompactionEvent)] == ["started", "failed"]
    assert kernel.live_run(sid) is None
    await kernel.aclose()
