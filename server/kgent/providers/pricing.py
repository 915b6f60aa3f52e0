"""Model prices: what a call's tokens cost, from a table per model (`prices.json` in this package; a user's file of
the same shape updates it, see kgent.config).

Prices are US dollars per million tokens: `input` (plain input), `output`, `cacheRead` (input read from the prompt
cache), `cacheWrite` (input written to it). A model matches an entry by its exact name, or by its name plus a dated
snapshot suffix (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`, `…@20250929`, `…-latest`); any other model has
no price, and hosts show its tokens only. No prefix guessing: `gpt-5-pro` is not priced as `gpt-5`.

The same table says which models see images (`"vision": true`, matched the same way); an entry may give only that
(`{"my-llava": {"vision": true}}`) for a model without a price.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from kgent.core.errors import ConfigError
from kgent.core.messages import Usage

_SNAPSHOT = re.compile(r"^(?P<base>.+?)(?:-\d{8}|-\d{4}-\d{2}-\d{2}|-latest|@\d{8})$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Price:
    """US dollars per million tokens of each kind."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, usage: Usage) -> float:
        """The estimated cost of `usage`, in US dollars."""
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / 1_000_000


class PriceTable:
    """Prices by model name; `price(model)` is None for a model the table does not know. `vision` maps the models
    the table says something about images for: True (it takes images) or False."""

    def __init__(self, prices: Mapping[str, Price], vision: Mapping[str, bool] | None = None) -> None:
        self.prices = dict(prices)
        self.vision = dict(vision or {})

    def price(self, model: str) -> Price | None:
        found = self.prices.get(model)
        if found is None and (m := _SNAPSHOT.match(model)) is not None:
            found = self.prices.get(m.group("base"))
        return found

    def sees_images(self, model: str) -> bool:
        """Whether the table says `model` takes images (unknown models: no)."""
        found = self.vision.get(model)
        if found is None and (m := _SNAPSHOT.match(model)) is not None:
            found = self.vision.get(m.group("base"))
        return bool(found)

    def vision_models(self) -> list[str]:
        """The models that take images, sorted (for an error that says how to pick one)."""
        return sorted(name for name, yes in self.vision.items() if yes)

    def updated(self, other: PriceTable) -> PriceTable:
        """This table with `other`'s entries added or replacing these."""
        return PriceTable({**self.prices, **other.prices}, {**self.vision, **other.vision})

    @classmethod
    def from_json(cls, data: Any, source: str) -> PriceTable:
        """A table from `{"models": {name: {input, output, cacheRead?, cacheWrite?}}}` (a missing cache price is the
        input price); ConfigError naming `source` and the entry when the shape is wrong."""
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, dict):
            raise ConfigError(f'{source}: expected {{"models": {{"<model>": {{"input": …, "output": …}}}}}}')
        prices = {}
        vision: dict[str, bool] = {}
        for name, entry in models.items():
            if isinstance(entry, dict) and "vision" in entry:
                if not isinstance(entry["vision"], bool):
                    raise ConfigError(f"{source}: 'vision' of {name!r} must be true or false")
                vision[str(name)] = entry["vision"]
                if "input" not in entry and "output" not in entry:
                    continue  # a model's capability without a price
            try:
                base = float(entry["input"])
                prices[str(name)] = Price(
                    input=base,
                    output=float(entry["output"]),
                    cache_read=float(entry.get("cacheRead", base)),
                    cache_write=float(entry.get("cacheWrite", base)),
                )
            except (TypeError, KeyError, ValueError, AttributeError):
                raise ConfigError(
                    f"{source}: the price of {name!r} needs numbers 'input' and 'output' "
                    "(dollars per million tokens; 'cacheRead' and 'cacheWrite' are optional)"
                ) from None
        return cls(prices, vision)


@lru_cache(maxsize=1)
def builtin_prices() -> PriceTable:
    """The table shipped in the package (kgent/providers/prices.json)."""
    text = (Path(__file__).parent / "prices.json").read_text(encoding="utf-8")
    return PriceTable.from_json(json.loads(text), "the built-in price table")


def load_prices(path: str) -> PriceTable:
    """The built-in table updated with the JSON file at `path`; ConfigError if it cannot be read."""
    try:
        data = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the price table {path}: {exc}") from None
    return builtin_prices().updated(PriceTable.from_json(data, path))
