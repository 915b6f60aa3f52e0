"""Mode names: the five modes, their aliases and spelling variants; anything else is a ConfigError."""

from __future__ import annotations

import pytest

from kgent.core.errors import ConfigError
from kgent.permissions import MODE_ALIASES, MODES, normalize_mode


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("plan", "plan"),
        ("ask", "ask"),
        ("auto", "auto"),
        ("full", "full"),
        ("PLAN", "plan"),
        (" Auto ", "auto"),
        ("interactive", "ask"),
        ("Interactive", "ask"),
        ("risk_based", "risk_based"),
        ("risk-based", "risk_based"),
        ("RISK-BASED", "risk_based"),
        ("allow_all", "full"),
        ("allow-all", "full"),
        ("Allow_All", "full"),
    ],
)
def test_normalize_mode_accepts_names_aliases_and_variants(raw: str, expected: str) -> None:
    assert normalize_mode(raw) == expected


def test_modes_and_aliases_are_the_documented_ones() -> None:
    assert MODES == ("plan", "ask", "auto", "full", "risk_based")
    assert dict(MODE_ALIASES) == {"interactive": "ask", "allow_all": "full"}


@pytest.mark.parametrize("raw", ["", "yolo", "read_only", "plan!", "auto mode", "fully"])
def test_unknown_mode_is_a_config_error_listing_the_valid_names(raw: str) -> None:
    with pytest.raises(ConfigError) as info:
        normalize_mode(raw)
    message = str(info.value)
    assert repr(raw) in message
    for name in (*MODES, *MODE_ALIASES):
        assert name in message
    assert info.value.code == "config_error"
