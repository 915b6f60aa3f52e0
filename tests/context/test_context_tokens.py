"""Token estimates: chars/4 per message, reported usage where it can be trusted, windows per model."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kgent.context.compaction import CompactionSettings
from kgent.context.tokens import (
    RunningEstimate,
    context_window,
    estimate_context,
    estimate_message,
    estimate_overhead,
    estimate_text,
)
from kgent.core.messages import (
    AssistantMessage,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from kgent.kernel.config import KernelConfig
from kgent.providers.base import ToolSchema


def test_chars_over_four_rounded_up() -> None:
    assert [estimate_text("x" * n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]
    assert estimate_message(UserMessage(text="x" * 9)) == 3
    assert estimate_message(SummaryMessage(text="x" * 8)) == 2
    assert estimate_message(ToolResultMessage(tool_call_id="c", name="read", content="x" * 12)) == 4  # + name
    a = AssistantMessage(text="abcd", thinking="efgh", tool_calls=(ToolCall(id="c", name="ls", arguments={"p": 1}),))
    assert estimate_message(a) == -(-(4 + 4 + 2 + len('{"p": 1}')) // 4)


def test_reported_usage_plus_estimates_after_it() -> None:
    msgs = [
        UserMessage(text="x" * 4000),
        AssistantMessage(text="y" * 40, usage=Usage(input_tokens=1000, output_tokens=10, cache_read_tokens=500)),
        ToolResultMessage(tool_call_id="c", name="read", content="z" * 396),
    ]
    est = estimate_context(msgs, overhead=99)
    assert (est.source, est.reported, est.estimated, est.tokens) == ("usage+estimate", 1510, 100, 1610)


def test_a_fully_cached_prompt_still_counts_as_reported_usage() -> None:
    """Anthropic reports only the tokens after the last cache breakpoint as plain input: possibly none."""
    msgs = [UserMessage(text="x" * 4000),
            AssistantMessage(text="y", usage=Usage(input_tokens=0, output_tokens=10, cache_read_tokens=1200))]
    est = estimate_context(msgs, overhead=99)
    assert (est.source, est.tokens) == ("usage+estimate", 1210)
    running = RunningEstimate(overhead=99)
    assert running.update(msgs).tokens == 1210


def test_usage_before_trusted_from_is_ignored() -> None:
    msgs = [SummaryMessage(text="s" * 40), AssistantMessage(text="a" * 40, usage=Usage(input_tokens=90_000)),
            UserMessage(text="u" * 40)]
    est = estimate_context(msgs, trusted_from=2, overhead=5)
    assert (est.source, est.tokens) == ("estimate", 5 + 10 + 10 + 10)


def test_no_usage_means_estimates_plus_overhead() -> None:
    tools = [ToolSchema(name="read", description="Read a file", parameters={"type": "object"})]
    overhead = estimate_overhead("p" * 400, tools)
    assert overhead > 100
    assert estimate_context([UserMessage(text="x" * 40)], overhead=overhead).tokens == overhead + 10


def test_windows_per_model() -> None:
    assert context_window("openai", "deepseek-chat") == 128_000
    assert context_window("anthropic", "claude-sonnet-4-5") == 200_000
    assert context_window("openai", "gpt-4.1-mini") == 1_047_576
    assert context_window("scripted", "tool-loop") == 32_768
    assert context_window("openai", "some-local-model") == 128_000


def test_settings_come_from_the_kernel_config_or_the_table() -> None:
    s = CompactionSettings.resolve(KernelConfig(), "openai", "deepseek-chat")
    assert (s.context_window, s.reserve_tokens, s.keep_recent_tokens) == (128_000, 16_384, 20_000)
    assert s.threshold == 128_000 - 16_384 and s.keep_tokens == 20_000
    s = CompactionSettings.resolve(KernelConfig(context_window=1000, reserve_tokens=16_384, keep_recent_tokens=20_000),
                                   "openai", "deepseek-chat")
    assert s.threshold == 500 and s.keep_tokens == 250  # small windows stay usable


@settings(max_examples=100, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.sampled_from(["user", "assistant", "usage", "tool"]), st.integers(0, 200)),
                   max_size=30),
    trusted_from=st.integers(0, 10),
    steps=st.integers(1, 5),
)
def test_the_running_estimate_equals_the_one_shot_estimate(sizes, trusted_from, steps) -> None:
    make = {
        "user": lambda n: UserMessage(text="u" * n),
        "assistant": lambda n: AssistantMessage(text="a" * n),
        "usage": lambda n: AssistantMessage(text="a" * n, usage=Usage(input_tokens=n + 1, output_tokens=n)),
        "tool": lambda n: ToolResultMessage(tool_call_id="c", name="read", content="t" * n),
    }
    history = [make[kind](n) for kind, n in sizes]
    running = RunningEstimate(trusted_from=trusted_from, overhead=7)
    grown: list = []
    for i in range(0, len(history) + 1, steps):  # the loop appends, then asks
        grown.extend(history[len(grown) : i])
        assert running.update(grown) == estimate_context(grown, trusted_from=trusted_from, overhead=7)
    replaced = history[: len(history) // 2]  # a compaction replaces the history with a new, shorter list
    assert running.update(replaced) == estimate_context(replaced, trusted_from=trusted_from, overhead=7)
