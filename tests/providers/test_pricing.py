"""The price table: exact names and dated snapshots only, user files on top of the built-in table, cost arithmetic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgent.core.errors import ConfigError
from kgent.core.messages import Usage
from kgent.providers.pricing import Price, PriceTable, builtin_prices, load_prices


@pytest.mark.parametrize(
    ("model", "priced_as"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("deepseek-chat", "deepseek-chat"),
        ("gpt-5-pro", None),  # no prefix guessing: a different model, a different price
        ("claude-sonnet-4-5-preview", None),
        ("tool-loop", None),
    ],
)
def test_models_match_by_name_or_dated_snapshot(model: str, priced_as: str | None) -> None:
    table = builtin_prices()
    expected = table.prices[priced_as] if priced_as else None
    assert table.price(model) == expected


def test_cost_is_dollars_per_million_tokens_of_each_kind() -> None:
    price = Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    usage = Usage(input_tokens=1_000, output_tokens=2_000, cache_read_tokens=100_000, cache_write_tokens=10_000)
    assert price.cost(usage) == pytest.approx((3_000 + 30_000 + 30_000 + 37_500) / 1e6)


def test_a_user_file_adds_and_replaces_models(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": {"my-model": {"input": 1, "output": 2}, "deepseek-chat": {"input": 9, "output": 9}}}))
    table = load_prices(str(path))
    assert table.price("my-model") == Price(input=1, output=2, cache_read=1, cache_write=1)  # cache prices default
    assert table.price("deepseek-chat") == Price(input=9, output=9, cache_read=9, cache_write=9)
    assert table.price("claude-sonnet-4-5") == builtin_prices().price("claude-sonnet-4-5")


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ("{not json", "cannot read"),
        ('{"prices": {}}', '"models"'),
        ('{"models": {"m": {"input": "cheap", "output": 1}}}', "'m' needs numbers"),
        ('{"models": {"m": {"output": 1}}}', "'m' needs numbers"),
    ],
)
def test_a_bad_user_file_is_a_config_error_naming_it(tmp_path: Path, content: str, complaint: str) -> None:
    path = tmp_path / "prices.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match=complaint):
        load_prices(str(path))
    with pytest.raises(ConfigError, match="cannot read"):
        load_prices(str(tmp_path / "missing.json"))


def test_builtin_entries_are_complete() -> None:
    table = builtin_prices()
    assert len(table.prices) >= 20
    for name, price in table.prices.items():
        assert 0 < price.cache_read <= price.input <= price.cache_write and price.output > 0, name
    assert PriceTable({}).price("deepseek-chat") is None
