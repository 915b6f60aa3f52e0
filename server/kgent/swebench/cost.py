# Concept: what a run's tokens cost — prices per million tokens, from `--price` or a short list of list prices.
"""Token counts come from the provider (`usage` events); prices do not, so they are given here. The built-in
prices are the vendors' public list prices when this was written (2025-10) and will go stale: pass `--price` to be
sure. A model with no known price has cost None, and `--cost-limit` then needs `--price`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from kgent.core.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens: fresh input, output, and cached input (read from the provider's cache)."""

    input: float
    output: float
    cache_read: float | None = None  # None: priced as fresh input

    @classmethod
    def parse(cls, text: str) -> Price:
        """`IN,OUT` or `IN,OUT,CACHED` in USD per million tokens (`--price 0.28,0.42,0.028`)."""
        parts = [p.strip() for p in text.split(",")]
        if len(parts) not in (2, 3) or not all(re.fullmatch(r"\d+(\.\d*)?|\.\d+", p) for p in parts):
            raise ConfigError(f"--price takes IN,OUT[,CACHED] in USD per million tokens, got {text!r}")
        values = [float(p) for p in parts]
        return cls(values[0], values[1], values[2] if len(values) == 3 else None)

    def cost(self, usage: Mapping[str, int]) -> float:
        """USD for token counts in the kernel's usage form (`inputTokens`, `outputTokens`, `cacheReadTokens`,
        `cacheWriteTokens`; cache writes are priced as fresh input)."""
        cached_price = self.input if self.cache_read is None else self.cache_read
        fresh = usage.get("inputTokens", 0) + usage.get("cacheWriteTokens", 0)
        total = fresh * self.input + usage.get("outputTokens", 0) * self.output
        total += usage.get("cacheReadTokens", 0) * cached_price
        return total / 1_000_000


# List prices (USD per million tokens), by model name or prefix; the first match wins.
LIST_PRICES: tuple[tuple[str, Price], ...] = (
    ("deepseek-chat", Price(0.28, 0.42, 0.028)),
    ("deepseek-reasoner", Price(0.28, 0.42, 0.028)),
    ("claude-sonnet-4", Price(3.0, 15.0, 0.30)),
    ("claude-opus-4-1", Price(15.0, 75.0, 1.50)),
    ("claude-haiku-4-5", Price(1.0, 5.0, 0.10)),
)


def price_for(provider: str, model: str, explicit: Price | None = None) -> Price | None:
    """`explicit`, else a list price for the model, else 0 for the scripted provider, else None (unknown)."""
    if explicit is not None:
        return explicit
    if provider == "scripted":
        return Price(0.0, 0.0)
    for prefix, price in LIST_PRICES:
        if model == prefix or model.startswith(prefix):
            return price
    return None
