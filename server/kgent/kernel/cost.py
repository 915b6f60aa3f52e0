"""What a run costs: its token totals priced from the model's entry in the price table (kgent.providers.pricing),
the wire form of usage (with the text every front shows of it), the cost limit checked before each model call, and
the totals of a stored session. Costs are estimates in US dollars; a model without a price shows tokens only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from kgent.context.tokens import estimate_context, estimate_message, prompt_tokens
from kgent.core.events import UsageEvent
from kgent.core.messages import Message, Usage
from kgent.providers.pricing import Price, PriceTable
from kgent.session.entries import SessionEntry

CURRENCY = "USD"


def usage_to_wire(usage: Usage, cost: float | None) -> dict[str, Any]:
    """`{inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, cost?: {amount, currency}, text}`."""
    wire: dict[str, Any] = usage.to_dict()
    amount = round(cost, 6) if cost is not None else None
    if amount is not None:
        wire["cost"] = {"amount": amount, "currency": CURRENCY}
    wire["text"] = usage_text(usage, amount)
    return wire


def usage_text(usage: Usage, cost: float | None) -> str:
    """ "1200 in (900 cached) / 40 out tokens · ≈ $0.0012": all input (plain, read from and written to the prompt
    cache), the cached share, the output; the cost only when the model has a price."""
    cached = usage.cache_read_tokens
    text = f"{prompt_tokens(usage)} in{f' ({cached} cached)' if cached else ''} / {usage.output_tokens} out tokens"
    return text if cost is None else f"{text} · ≈ ${cost:.4f}"


def context_use(usage: Usage, window: int) -> dict[str, Any]:
    """A `usage` event's `context`: what the model's context held after the call (its whole prompt, cached or not,
    and its answer) out of the model's window, the share rounded to a whole percent, and the gauge's text
    ("context 24k of 200k tokens (12%)")."""
    tokens = prompt_tokens(usage) + usage.output_tokens
    percent = _half_up(100 * tokens / window) if window > 0 else 0
    return {
        "tokens": tokens,
        "window": window,
        "percent": percent,
        "text": f"context {_short(tokens)} of {_short(window)} tokens ({percent}%)",
    }


def _half_up(x: float) -> int:
    return math.floor(x + 0.5)


def _short(n: int) -> str:
    """24k, 2.1k, 950."""
    if n >= 10_000:
        return f"{_half_up(n / 1000)}k"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


class RunCost:
    """One run's spending, and its limit: `check` before each model call, `add` after it. `window`: the model's
    context window, for the `context` of each call's usage event."""

    def __init__(self, price: Price | None, limit: float | None = None, *, window: int | None = None) -> None:
        self.price = price
        self.limit = limit
        self.window = window
        self.usage = Usage()
        self.spent = 0.0
        # The last call that reported usage: what it carried (history length, last message) and its usage.
        self._last: tuple[int, Message | None, Usage] | None = None
        self._sending: tuple[int, Message | None] = (0, None)

    def wire(self) -> dict[str, Any]:
        """The run's total usage (and cost) in wire form."""
        return usage_to_wire(self.usage, self.spent if self.price is not None else None)

    def add(self, usage: Usage) -> UsageEvent:
        """Count the usage of the call last checked; the `usage` event to emit."""
        turn = self.price.cost(usage) if self.price is not None else None
        self.usage = self.usage + usage
        self.spent += turn or 0.0
        self._last = (*self._sending, usage)
        context = context_use(usage, self.window) if self.window is not None else None
        return UsageEvent(turn=usage_to_wire(usage, turn), total=self.wire(), context=context)

    def absorb(self, wire: dict[str, Any]) -> UsageEvent:
        """Count a sub-agent's whole run (its `run_end` usage) as one turn of this run; the `usage` event to emit."""
        usage = Usage.from_dict(wire)
        cost = wire.get("cost")
        turn = float(cost["amount"]) if isinstance(cost, dict) and self.price is not None else None
        self.usage = self.usage + usage
        self.spent += turn or 0.0
        return UsageEvent(turn=usage_to_wire(usage, turn), total=self.wire())

    @property
    def remaining(self) -> float | None:
        """What is left of the limit (None without one)."""
        return None if self.limit is None else self.limit - self.spent

    def check(self, history: Sequence[Message], overhead: int) -> dict[str, str] | None:
        """Before a model call carrying `history`: the run's error (code `cost_limit`) when the call would likely
        take the spending past the limit, else None (always None without a limit or a price)."""
        self._sending = (len(history), history[-1] if history else None)
        if self.limit is None or self.price is None:
            return None
        estimate = self.next_call(history, overhead)
        if self.spent + estimate <= self.limit:
            return None
        return {
            "code": "cost_limit",
            "message": (
                f"Stopped before the next model call: with it (about ${estimate:.4f}) the run's estimated cost "
                f"would pass its limit of ${self.limit:.4f} (spent so far: ${self.spent:.4f})."
            ),
        }

    def next_call(self, history: Sequence[Message], overhead: int) -> float:
        """The estimated cost of a call carrying `history`: the last call's input plus chars/4 of the messages since
        (chars/4 of everything when there was no call yet, or a compaction replaced the history), of which what the
        last call sent counts at the cache-read price when the provider reported cache use and the rest at the
        higher of the input and cache-write prices; then as many output tokens as the last call produced."""
        assert self.price is not None
        tokens, cached, output = 0, 0, 0
        if self._last is not None:
            n, tail, usage = self._last
            output = usage.output_tokens
            if n <= len(history) and (n == 0 or history[n - 1] is tail):
                tokens = prompt_tokens(usage) + sum(estimate_message(m) for m in history[n:])
                cached = prompt_tokens(usage) if usage.cache_read_tokens + usage.cache_write_tokens else 0
        if not tokens:
            tokens = estimate_context(history, trusted_from=len(history), overhead=overhead).tokens
        p = self.price
        return (
            cached * p.cache_read + (tokens - cached) * max(p.input, p.cache_write) + output * p.output
        ) / 1e6


def session_usage(entries: Iterable[SessionEntry], prices: PriceTable) -> dict[str, Any]:
    """The token totals of every model turn stored in a session (all branches: all that was paid for), with their
    cost when every priced turn's model has a price."""
    total, cost, priced = Usage(), 0.0, True
    for entry in entries:
        message = entry.data.get("message") if entry.type == "message" else None
        if not isinstance(message, dict) or message.get("role") != "assistant" or "usage" not in message:
            continue
        usage = Usage.from_dict(message["usage"])
        total = total + usage
        price = prices.price(str(message.get("model") or ""))
        if price is None:
            priced = False
        else:
            cost += price.cost(usage)
    return usage_to_wire(total, cost if priced else None)
