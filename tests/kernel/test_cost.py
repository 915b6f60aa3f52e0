"""Usage and cost through the loop: `usage` events and `run_end` carry tokens and, for a priced model, their cost;
a session's totals cover every branch."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import collect
from kgent.core.events import UsageEvent
from kgent.core.messages import AssistantMessage, Usage, message_to_dict
from kgent.kernel.cost import RunCost, session_usage, usage_to_wire
from kgent.providers.pricing import Price, PriceTable
from kgent.session.entries import new_entry

PRICE = Price(input=2.0, output=10.0, cache_read=0.5, cache_write=2.5)
USAGE = [{"usage": {"input": 1000, "output": 100}}]
SCRIPT = [[{"tool": "read", "args": {"path": "sample.py"}}, *USAGE], [{"text": "Done."}, *USAGE]]


def cost(amount: float) -> dict:
    return {"amount": pytest.approx(amount), "currency": "USD"}


async def test_usage_events_and_run_end_carry_the_cost_of_a_priced_model(make_kernel, workspace: Path) -> None:
    kernel = make_kernel(SCRIPT, mode="full", prices=PriceTable({"script": PRICE}))
    run = kernel.create_run("read it", workspace=workspace)
    events = [e for e in await collect(run) if isinstance(e, UsageEvent)]
    result = await run.result()
    per_call = (1000 * 2.0 + 100 * 10.0) / 1e6
    assert [e.turn["cost"] for e in events] == [cost(per_call), cost(per_call)]
    assert [e.total["cost"] for e in events] == [cost(per_call), cost(2 * per_call)]
    assert result.usage == {
        "inputTokens": 2000, "outputTokens": 200, "cacheReadTokens": 0, "cacheWriteTokens": 0, "cost": cost(2 * per_call),
    }


async def test_an_unknown_model_shows_tokens_only(make_kernel, workspace: Path) -> None:
    kernel = make_kernel(SCRIPT, mode="full")  # the built-in table knows no model called "script"
    run = kernel.create_run("read it", workspace=workspace)
    events = [e for e in await collect(run) if isinstance(e, UsageEvent)]
    result = await run.result()
    assert events and all("cost" not in e.turn and "cost" not in e.total for e in events)
    assert result.usage == {"inputTokens": 2000, "outputTokens": 200, "cacheReadTokens": 0, "cacheWriteTokens": 0}


def test_cache_reads_and_writes_are_priced_at_their_rates() -> None:
    meter = RunCost(PRICE)
    event = meter.add(Usage(input_tokens=10, output_tokens=20, cache_read_tokens=30_000, cache_write_tokens=400))
    assert event.turn["cost"] == cost((10 * 2.0 + 20 * 10.0 + 30_000 * 0.5 + 400 * 2.5) / 1e6)
    assert usage_to_wire(Usage(), None) == {"inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0}


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
    assert "cost" not in session_usage([root, a, b], PriceTable({"a": PRICE}))  # one turn unpriced: tokens only
