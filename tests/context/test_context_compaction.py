"""Compaction on demand (`compact_session`) and inside runs (the kernel's Compactor): checkpoints, updates of the
previous checkpoint, failure without residue, idempotence on re-load, and the context-overflow retry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kgent.context.compaction import CompactionError, compact_session
from kgent.context.projection import project
from kgent.context.summarizing import SummarizingProvider, is_summary_request, scripted_summary
from kgent.context.summary import SECTIONS
from kgent.context.tokens import estimate_message
from kgent.core.events import CompactionEvent
from kgent.core.messages import (
    AssistantMessage,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    message_to_dict,
)
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.base import ProviderRequest, StreamDone, StreamEvent
from kgent.providers.scripted import ScriptedProvider
from kgent.session.entries import new_entry
from kgent.session.jsonl import JsonlSessionStore


class TurnProvider:
    """Plays `turns` in order, one per (non-summary) request, whatever the history looks like after compaction.
    Summary requests get `summary(request)`: by default a valid one; `overflow_above` fails requests whose
    messages estimate above that many tokens with a context_overflow error."""

    name = "scripted"
    model = "turns"

    def __init__(
        self, turns: list[AssistantMessage], summary=scripted_summary, overflow_above: int | None = None
    ):
        self.turns = turns
        self.summary = summary
        self.overflow_above = overflow_above
        self.requests: list[ProviderRequest] = []
        self.summary_requests: list[ProviderRequest] = []
        self.overflows = 0

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        if is_summary_request(request):
            self.summary_requests.append(request)
            answer = self.summary(request)
            yield StreamDone(
                answer if isinstance(answer, AssistantMessage) else AssistantMessage(text=answer)
            )
            return
        if (
            self.overflow_above is not None
            and sum(map(estimate_message, request.messages)) > self.overflow_above
        ):
            self.overflows += 1
            yield StreamDone(
                AssistantMessage(
                    stop_reason="error", error="prompt is too long", error_code="context_overflow"
                )
            )
            return
        self.requests.append(request)
        yield StreamDone(self.turns[min(len(self.requests) - 1, len(self.turns) - 1)])

    async def aclose(self) -> None:
        return None


def reads(n: int) -> list[AssistantMessage]:
    """n turns that each read notes.txt, then a final answer."""
    turns = [
        AssistantMessage(
            text=f"Reading, step {i}.",
            stop_reason="tool_use",
            tool_calls=(ToolCall(id=f"call{i}", name="read", arguments={"path": "notes.txt"}),),
        )
        for i in range(n)
    ]
    return [*turns, AssistantMessage(text="All read.")]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("".join(f"line {i}: {'lorem ipsum ' * 8}\n" for i in range(20)))  # ~2 KB
    return ws.resolve()


async def run_events(kernel: AgentKernel, prompt: str, workspace: Path, **kw):
    run = kernel.create_run(prompt, workspace=workspace, **kw)
    events = [e async for e in run]
    return await run.result(), events


SMALL = dict(mode="full", context_window=4000, reserve_tokens=1000, keep_recent_tokens=1000)


async def test_a_long_run_compacts_automatically(tmp_path, workspace) -> None:
    store = JsonlSessionStore(tmp_path / "sessions")
    provider = TurnProvider(reads(12))
    kernel = AgentKernel(provider, store=store, config=KernelConfig(**SMALL))
    result, events = await run_events(kernel, "read the notes twelve times", workspace)
    assert result.status == "settled" and result.text == "All read."
    compactions = [e for e in events if isinstance(e, CompactionEvent)]
    completed = [e for e in compactions if e.status == "completed"]
    assert completed and all(e.trigger == "automatic" for e in compactions)
    assert [e.status for e in compactions[:2]] == ["started", "completed"]
    assert all(e.tokens_after < e.tokens_before for e in completed)

    tree = await JsonlSessionStore(tmp_path / "sessions").load(result.session_id)
    checkpoints = [e for e in tree.branch() if e.type == "compaction"]
    assert [c.id for c in checkpoints] == [e.entry_id for e in completed]
    first, *later = checkpoints
    assert set(first.data) >= {
        "summary",
        "coveredEntryIds",
        "firstKeptEntryId",
        "previousCheckpointId",
        "readFiles",
        "modifiedFiles",
        "tokensBefore",
        "tokensAfter",
    }
    assert first.data["previousCheckpointId"] is None and first.data["readFiles"] == ["notes.txt"]
    for prev, cp in zip(checkpoints, later, strict=False):
        assert cp.data["previousCheckpointId"] == prev.id
        assert "<previous-summary>" in provider.summary_requests[checkpoints.index(cp)].messages[0].text
    # every entry is still in the file; each request after a compaction starts from the summary
    assert sum(1 for e in tree.entries.values() if e.type == "message") == 1 + 13 + 12
    after = provider.requests[-1].messages
    assert isinstance(after[0], SummaryMessage) and after[0].text == checkpoints[-1].data["summary"]
    # idempotent on re-load: the stored branch projects to what the last request carried (plus its answer)
    assert [message_to_dict(m) for m in project(tree.branch())][:-1] == [message_to_dict(m) for m in after]
    assert sum(map(estimate_message, after)) < 4000


async def test_a_failed_summary_persists_nothing_and_the_run_continues(tmp_path, workspace) -> None:
    store = JsonlSessionStore(tmp_path / "sessions")
    provider = TurnProvider(reads(8), summary=lambda request: "Sure! Here is a summary without sections.")
    kernel = AgentKernel(provider, store=store, config=KernelConfig(**SMALL))
    result, events = await run_events(kernel, "read a lot", workspace)
    assert result.status == "settled"
    compactions = [e for e in events if isinstance(e, CompactionEvent)]
    assert [e.status for e in compactions] == ["started", "failed"]  # tried once, then off for this run
    assert "missing Goal" in compactions[-1].error
    tree = await store.load(result.session_id)
    assert not [e for e in tree.entries.values() if e.type == "compaction"]
    assert len(provider.summary_requests) == 1
    assert not any(isinstance(m, SummaryMessage) for m in provider.requests[-1].messages)


async def test_auto_compact_off_means_no_compaction(tmp_path, workspace) -> None:
    provider = TurnProvider(reads(8))
    kernel = AgentKernel(provider, config=KernelConfig(**SMALL, auto_compact=False))
    result, events = await run_events(kernel, "read a lot", workspace)
    assert result.status == "settled"
    assert not [e for e in events if isinstance(e, CompactionEvent)] and not provider.summary_requests


async def test_context_overflow_compacts_once_and_retries_the_turn(tmp_path, workspace) -> None:
    store = JsonlSessionStore(tmp_path / "sessions")
    provider = TurnProvider(reads(6), overflow_above=2500)
    config = KernelConfig(
        mode="full", context_window=1_000_000, auto_compact=False, keep_recent_tokens=20_000
    )
    kernel = AgentKernel(provider, store=store, config=config)
    result, events = await run_events(kernel, "read until it overflows", workspace)
    assert result.status == "settled", result.error
    compactions = [e for e in events if isinstance(e, CompactionEvent)]
    assert compactions and {e.trigger for e in compactions} == {"overflow"}
    assert provider.overflows >= 1 and len(provider.summary_requests) >= 1
    tree = await store.load(result.session_id)
    assert [e for e in tree.branch() if e.type == "compaction"]


async def test_overflow_that_compaction_cannot_help_fails_the_run_clearly(tmp_path, workspace) -> None:
    provider = TurnProvider(reads(2), overflow_above=1)
    kernel = AgentKernel(provider, config=KernelConfig(mode="full", auto_compact=False))
    result, _ = await run_events(kernel, "hi", workspace)
    assert result.status == "failed" and result.error["code"] == "context_overflow"


# -- on demand --------------------------------------------------------------------------------------------------


async def stored_session(store: JsonlSessionStore, workspace: Path, turns: int = 6, start: str | None = None):
    """A session of `turns` tool rounds (read, write alternating); returns the leaf id."""
    sid = "s1"
    if start is None:
        await store.create(workspace=str(workspace), session_id=sid)
        first = new_entry("message", None, message=message_to_dict(UserMessage(text="refactor the notes")))
        await store.append(sid, [first])
        start = first.id
    parent = start
    for i in range(turns):
        name = "read" if i % 2 == 0 else "write"
        cid = f"{parent}-{i}"
        a = new_entry(
            "message",
            parent,
            message=message_to_dict(
                AssistantMessage(
                    text=f"step {i} " + "a" * 300,
                    stop_reason="tool_use",
                    tool_calls=(ToolCall(id=cid, name=name, arguments={"path": f"file{i}.txt"}),),
                )
            ),
        )
        r = new_entry(
            "message",
            a.id,
            message=message_to_dict(ToolResultMessage(tool_call_id=cid, name=name, content="r" * 1200)),
        )
        await store.append(sid, [a, r])
        parent = r.id
    return parent


async def test_compact_session_writes_one_checkpoint_and_is_idempotent(tmp_path, workspace) -> None:
    store = JsonlSessionStore(tmp_path / "sessions")
    await stored_session(store, workspace)
    provider = SummarizingProvider(ScriptedProvider("hello"))
    result = await compact_session(store, provider, "s1", keep_recent_tokens=700)
    assert result is not None and provider.summaries == 1
    data = result.entry.data
    assert data["trigger"] == "manual" and data["previousCheckpointId"] is None
    covered = [e for e in (await store.load("s1")).entries.values() if e.id in data["coveredEntryIds"]]
    paths = {c["name"]: set() for c in ({"name": "read"}, {"name": "write"})}
    for e in covered:
        for c in e.data["message"].get("toolCalls", ()):
            paths[c["name"]].add(c["arguments"]["path"])
    assert data["readFiles"] == sorted(paths["read"]) and data["modifiedFiles"] == sorted(paths["write"])
    assert data["readFiles"] and data["modifiedFiles"]
    assert data["tokensAfter"] < data["tokensBefore"] == result.tokens_before
    assert [line.split("\n")[0] for line in data["summary"].split("## ")[1:]] == list(SECTIONS)
    reloaded = await JsonlSessionStore(tmp_path / "sessions").load("s1")
    assert reloaded.leaf_id == result.entry.id
    assert [message_to_dict(m) for m in project(reloaded.branch())] == [
        message_to_dict(m) for m in result.messages
    ]
    assert (
        await compact_session(store, provider, "s1", keep_recent_tokens=700) is None
    )  # nothing new to cover
    assert provider.summaries == 1


async def test_a_second_compaction_updates_the_first(tmp_path, workspace) -> None:
    store = JsonlSessionStore(tmp_path / "sessions")
    await stored_session(store, workspace)
    provider = TurnProvider([])
    first = await compact_session(store, provider, "s1", keep_recent_tokens=700)
    leaf = await stored_session(store, workspace, turns=4, start=first.entry.id)
    second = await compact_session(store, provider, "s1", keep_recent_tokens=700)
    assert second is not None and second.entry.parent_id == leaf
    assert second.entry.data["previousCheckpointId"] == first.entry.id
    assert set(second.entry.data["coveredEntryIds"]).isdisjoint(first.entry.data["coveredEntryIds"])
    request = provider.summary_requests[1].messages[0].text
    assert request.startswith("<previous-summary>\n" + first.entry.data["summary"])
    assert "refactor the notes" not in request.split("<conversation>")[1]  # the covered span is not re-sent
    assert set(second.entry.data["readFiles"]) >= set(first.entry.data["readFiles"])


@pytest.mark.parametrize(
    "answer, complaint",
    [
        ("no sections at all", "missing Goal"),
        (
            AssistantMessage(stop_reason="error", error="HTTP 500", error_code="provider_unavailable"),
            "HTTP 500",
        ),
        (
            AssistantMessage(text="", tool_calls=(ToolCall(id="x", name="read"),), stop_reason="tool_use"),
            "tool call",
        ),
    ],
)
async def test_a_failed_compaction_leaves_the_file_untouched(tmp_path, workspace, answer, complaint) -> None:
    store = JsonlSessionStore(tmp_path / "sessions")
    await stored_session(store, workspace)
    path = store.locate("s1")
    before = path.read_bytes()
    with pytest.raises(CompactionError) as exc:
        await compact_session(
            store, TurnProvider([], summary=lambda request: answer), "s1", keep_recent_tokens=700
        )
    assert complaint in exc.value.message and exc.value.code == "compaction_failed"
    assert path.read_bytes() == before


async def test_a_span_too_long_for_one_request_is_summarized_in_parts(tmp_path, workspace) -> None:
    store = JsonlSessionStore(tmp_path / "sessions")
    await stored_session(store, workspace, turns=12)
    answers: list[str] = []

    def numbered(request: ProviderRequest) -> str:
        answers.append(scripted_summary(request).replace("- (none)", f"- part {len(answers) + 1}", 1))
        return answers[-1]

    provider = TurnProvider([], summary=numbered)
    result = await compact_session(
        store, provider, "s1", config=KernelConfig(context_window=3000), keep_recent_tokens=700
    )
    assert result is not None and len(provider.summary_requests) >= 3
    for i, request in enumerate(provider.summary_requests):
        text = request.messages[0].text
        conversation = text.split("<conversation>\n")[1].split("\n</conversation>")[0]
        assert len(conversation) // 4 <= 1024 + 400  # one part: within the budget, give or take a message
        if i:
            assert text.startswith("<previous-summary>\n" + answers[i - 1])
    assert result.entry.data["summary"] == answers[-1]


def test_context_settings_are_configurable_per_model() -> None:
    from kgent.config import context_overrides
    from kgent.context.compaction import CompactionSettings
    from kgent.core.errors import ConfigError
    from kgent.kernel import KernelConfig

    config = KernelConfig(
        reserve_tokens=8_000,
        model_context={
            "deepseek": {"reserve_tokens": 4_000},
            "deepseek-reasoner": {"context_window": 64_000},
        },
    )
    chat = CompactionSettings.resolve(config, "openai", "deepseek-chat")
    assert (chat.context_window, chat.reserve_tokens, chat.keep_recent_tokens) == (128_000, 4_000, 20_000)
    reasoner = CompactionSettings.resolve(config, "openai", "deepseek-reasoner")
    assert (reasoner.context_window, reasoner.reserve_tokens) == (
        64_000,
        8_000,
    )  # longest prefix wins, per value
    claude = CompactionSettings.resolve(config, "anthropic", "claude-sonnet-4-5")
    assert (claude.context_window, claude.reserve_tokens) == (200_000, 8_000)

    env = {"KGENT_CONTEXT_WINDOW": "50000", "KGENT_KEEP_RECENT_TOKENS": "9000"}
    assert context_overrides(env) == {"context_window": 50_000, "keep_recent_tokens": 9_000}
    with pytest.raises(ConfigError, match="KGENT_RESERVE_TOKENS"):
        context_overrides({"KGENT_RESERVE_TOKENS": "lots"})
