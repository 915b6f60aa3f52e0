# Permission modes: the five run-scoped names and the spellings (seed 000's other names, case, dashes) that map to them.
# Parsing only; what each mode allows lives in policy.py.

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, get_args

from kgent.core.errors import ConfigError

Mode = Literal["plan", "ask", "auto", "full", "risk_based"]

MODES: Final[tuple[Mode, ...]] = get_args(Mode)

# Seed 000's `interactive` (medium and high risk ask) is exactly `ask`; its `allow_all` is `full`.
MODE_ALIASES: Final[Mapping[str, Mode]] = {
    "interactive": "ask",
    "allow_all": "full",
}


def normalize_mode(raw: str) -> Mode:
    """Map a mode name or alias (any case, `-` or `_`) to its Mode; unknown names raise ConfigError."""
    key = raw.strip().lower().replace("-", "_")
    for mode in MODES:
        if key == mode:
            return mode
    alias = MODE_ALIASES.get(key)
    if alias is not None:
        return alias
    valid = ", ".join(MODES)
    aliases = ", ".join(f"{name} ({target})" for name, target in MODE_ALIASES.items())
    raise ConfigError(f"unknown permission mode {raw!r}; valid modes: {valid}; aliases: {aliases}")
