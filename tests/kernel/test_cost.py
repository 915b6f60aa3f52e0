"""Usage and cost through the loop: `usage` events and `run_end` carry tokens and, for a priced model, their cost;
a session's totals cover every branch."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import collect
from kgent.core.events import UsageEvent
from kgent.core.messages import AssistantMessage, Usage, message_to_dict
from kgent.kernel.cost import RunCost, context_use, session_usage, usage_to_wire
from kgent.providers.pricing import Price, PriceTable
from kgent.session.entries import new_entry

PRICE = Price(input=2.0, output=10.0, cache_read=0.5, cache_write=2.5)
USAGE = [{"usage": {"input": 1000, "output": 100}}]
SCRIPT = [[{"tool": "read", "args": {"path": "sample.py"}}, *USAGE], [{"text": "Done."}, *USAGE]]


def cost(amount: float) -> dict:
    return {"amount": pytest.approx(amount), "currency": "USD"}


async def test_usage_events_and_run_end_carry_the_cost_of_a_priced_model(
    make_kernel, workspace: Path
) -> None:
    kernel = make_kernel(SCRIPT, mode="full", prices=PriceTable({"script": PRICE}))
    run = kernel.create_run("read it", workspace=workspace)
    events = [e for e in await collect(run) if isinstance(e, UsageEvent)]
    result = await run.result()
    per_call = (1000 * 2.0 + 100 * 10.0) / 1e6
    assert [e.turn["cost"] for e in events] == [cost(per_call), cost(per_call)]
    assert [e.total["cost"] for e in events] == [cost(per_call), cost(2 * per_call)]
    assert result.usage == {
        "inputTokens": 2000,
        "outputTokens": 200,
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
        "cost": cost(2 * per_call),
        "text": "2000 in / 200 out tokens · ≈ $0.0060",
    }


async def test_each_calls_usage_says_how_full_the_context_is(make_kernel, workspace: Path) -> None:
    """`context`: the call's whole prompt (cached or not) and its answer, of the model's window (the per-model
    setting here); none on the turn that counts a sub-agent's run."""
    kernel = make_kernel(SCRIPT, mode="full", model_context={"script": {"context_window": 64_000}})
    run = kernel.create_run("read it", workspace=workspace)
    events = [e for e in await collect(run) if isinstance(e, UsageEvent)]
    gauge = {"tokens": 1100, "window": 64_000, "percent": 2, "text": "context 1.1k of 64k tokens (2%)"}
    assert [e.context for e in events] == [gauge] * 2
    cost = RunCost(None, window=8_000)
    cached = Usage(input_tokens=10, output_tokens=5, cache_read_tokens=300, cache_write_tokens=40)
    assert cost.add(cached).context == {
        "tokens": 355,
        "window": 8_000,
        "percent": 4,
        "text": "context 355 of 8.0k tokens (4%)",
    }
    assert cost.absorb({"inputTokens": 900, "outputTokens": 90}).context is None
    assert RunCost(None).add(cached).context is None  # no window known: no gauge


async def test_an_unknown_model_shows_tokens_only(make_kernel, workspace: Path) -> None:
    kernel = make_kernel(SCRIPT, mode="full")  # the built-in table knows no model called "script"
    run = kernel.create_run("read it", workspace=workspace)
    events = [e for e in await collect(run) if isinstance(e, UsageEvent)]
    result = await run.result()
    assert events and all("cost" not in e.turn and "cost" not in e.total for e in events)
    assert result.usage == {
        "inputTokens": 2000,
        "outputTokens": 200,
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
        "text": "2000 in / 200 out tokens",
    }


def test_cache_reads_and_writes_are_priced_at_their_rates() -> None:
    meter = RunCost(PRICE)
    event = meter.add(
        Usage(input_tokens=10, output_tokens=20, cache_read_tokens=30_000, cache_write_tokens=400)
    )
    assert event.turn["cost"] == cost((10 * 2.0 + 20 * 10.0 + 30_000 * 0.5 + 400 * 2.5) / 1e6)
    assert usage_to_wire(Usage(), None) == {
        "inputTokens": 0,
        "outputTokens": 0,
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
        "text": "0 in / 0 out tokens",
    }


def test_the_texts_fronts_show_of_usage_and_of_the_gauge() -> None:
    """The one formatting of tokens, cost and context fullness: every front shows these strings as they are."""
    cached = Usage(input_tokens=41, output_tokens=52, cache_read_tokens=9310, cache_write_tokens=388)
    assert usage_to_wire(cached, 0.0051514)["text"] == "9739 in (9310 cached) / 52 out tokens · ≈ $0.0052"
    assert (
        usage_to_wire(Usage(input_tokens=3, output_tokens=1), 0.0)["text"]
        == "3 in / 1 out tokens · ≈ $0.0000"
    )

    def gauge(tokens: int, window: int) -> tuple[int, str]:
        use = context_use(Usage(input_tokens=tokens), window)
        return use["percent"], use["text"]

    assert gauge(24_400, 200_000) == (12, "context 24k of 200k tokens (12%)")
    assert gauge(2_150, 33_000) == (7, "context 2.1k of 33k tokens (7%)")
    assert gauge(999, 10_000) == (10, "context 999 of 10k tokens (10%)")
    assert gauge(125, 1_000) == (13, "context 125 of 1.0k tokens (13%)")  # half up, not to even
    assert gauge(10_500, 128_000)[1] == "context 11k of 128k tokens (8%)"
    assert gauge(5, 0) == (0, "context 5 of 0 tokens (0%)")


def test_session_totals_cover_every_branch_and_price_each_turn_by_its_model() -> None:
    def turn(parent: str | None, model: str, tokens: int):
        message = AssistantMessage(text="x", model=model, usage=Usage(input_tokens=tokens, output_tokens=1))
        return new_entry("message", parent, message=message_to_dict(message))

    root = new_entry("config", None, mode="ask", provider="openai", model="a")
    a, b = turn(root.id, "a", 1000), turn(root.id, "b", 3000)  # two branches from the root
    table = PriceTable({"a": PRICE, "b": Price(input=1.0, output=0.0, cache_read=1.0, cache_write=1.0)})
    totals = session_usage([root, a, b], table)
    assert (totals["inputTokens"], totals["outputTokens"]) == (4000, 2)
    assert totals["cost"] == cost((1000 * 2.0 + 10.0 + 3000 * 1.0) / 1e6)
    assert "cost" not in session_usage(
        [root, a, b], PriceTable({"a": PRICE})
    )  # one turn unpriced: tokens only


async def test_a_cost_limit_stops_the_run_before_the_call_that_would_pass_it(
    make_kernel, workspace: Path
) -> None:
    # Each call reports 1000 input + 100 output tokens: $0.003. After two calls ($0.006) the next one is
    # estimated at the last call's input plus the new messages, and its output again: past $0.007.
    script = [[{"tool": "read", "args": {"path": "sample.py"}}, *USAGE]] * 5 + [[{"text": "Done."}]]
    kernel = make_kernel(script, mode="full", prices=PriceTable({"script": PRICE}), cost_limit=0.007)
    run = kernel.create_run("read it five times", workspace=workspace)
    events = await collect(run)
    result = await run.result()
    assert (result.status, result.stop_reason, result.turns) == ("failed", "cost_limit", 2)
    assert result.error is not None and result.error["code"] == "cost_limit"
    assert (
        "limit of $0.0070" in result.error["message"] and "spent so far: $0.0060" in result.error["message"]
    )
    assert result.usage["cost"]["amount"] == pytest.approx(0.006) and events[-1].type == "run_end"
    # The session is whole: a later run (another limit) continues it.
    again = kernel.create_run("go on", workspace=workspace, session_id=result.session_id, cost_limit=1.0)
    await collect(again)
    assert (await again.result()).status == "settled"


async def test_a_cost_limit_needs_a_positive_amount_and_the_models_price(
    make_kernel, workspace: Path
) -> None:
    from kgent.core.errors import ConfigError

    with pytest.raises(ConfigError, match="needs the price of model 'script'"):
        make_kernel(SCRIPT).create_run("x", workspace=workspace, cost_limit=1.0)
    with pytest.raises(ConfigError, match="needs the price"):
        make_kernel(SCRIPT, cost_limit=1.0).create_run("x", workspace=workspace)
    priced = make_kernel(SCRIPT, prices=PriceTable({"script": PRICE}))
    with pytest.raises(ConfigError, match="positive number"):
        priced.create_run("x", workspace=workspace, cost_limit=0)


def test_the_next_call_is_estimated_at_cached_rates_once_the_provider_caches() -> None:
    from kgent.core.messages import ToolResultMessage, UserMessage

    meter = RunCost(PRICE, limit=1.0)
    history: list = [UserMessage(text="go")]
    meter.check(history, overhead=0)
    meter.add(Usage(input_tokens=10, output_tokens=200, cache_read_tokens=90_000, cache_write_tokens=1_990))
    history += [
        AssistantMessage(text="a" * 400),
        ToolResultMessage(tool_call_id="c", name="read", content="r" * 3596),
    ]
    new = 100 + 900  # chars/4 of the two new messages
    expected = (92_000 * 0.5 + new * 2.5 + 200 * 10.0) / 1e6
    assert meter.next_call(history, overhead=0) == pytest.approx(expected)
    # Without cache use reported, everything is priced as new input; after a compaction (the history replaced),
    # the estimate is chars/4 of what is left plus the overhead.
    plain = RunCost(PRICE, limit=1.0)
    plain.check(history[:1], overhead=0)
    plain.add(Usage(input_tokens=92_000, output_tokens=200))
    assert plain.next_call(history, overhead=0) == pytest.approx(((92_000 + new) * 2.5 + 200 * 10.0) / 1e6)
    assert plain.next_call([UserMessage(text="s" * 400)], overhead=50) == pytest.approx(
        (150 * 2.5 + 200 * 10.0) / 1e6
    )


def test_cost_limit_and_prices_from_the_environment(tmp_path: Path) -> None:
    import json

    from kgent.config import cost_limit, prices
    from kgent.core.errors import ConfigError

    assert cost_limit({}) is None and cost_limit({"KGENT_COST_LIMIT": "0.5"}) == 0.5
    assert cost_limit({"KGENT_COST_LIMIT": "0.5"}, explicit=2.0) == 2.0  # a flag or a run's param wins
    for bad in ("0", "-1", "lots", "inf", "nan"):
        with pytest.raises(ConfigError, match="KGENT_COST_LIMIT must be a positive number"):
            cost_limit({"KGENT_COST_LIMIT": bad})
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"models": {"local-llm": {"input": 0, "output": 0}}}))
    assert prices({"KGENT_PRICES": str(path)}).price("local-llm") == Price(
        input=0, output=0, cache_read=0, cache_write=0
    )
    assert prices({}).price("local-llm") is None
