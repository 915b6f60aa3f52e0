# Permission modes (core vocabulary: every layer names them): the five run-scoped names and the spellings (seed 000's
# other names, case, dashes) that map to them. What each mode allows lives in kgent.permissions.policy;
# parsing, and the one text per mode every front shows (MODE_DESCRIPTIONS), live here.

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, get_args

from kgent.core.errors import ConfigError

Mode = Literal["plan", "ask", "auto", "full", "risk_based"]

MODES: Final[tuple[Mode, ...]] = get_args(Mode)

# What each mode really does (policy.py's matrix, in words): the ACP modes, the handshake's
# `capabilities.modeDescriptions`, the web client's picker, the editors' settings and the CLI help all show these.
MODE_DESCRIPTIONS: Final[Mapping[Mode, str]] = {
    "plan": (
        "reads of the workspace and read-only commands in the sandbox run unasked; every write, other command, "
        "network access and read outside the workspace is refused; protected files ask"
    ),
    "ask": (
        "reads of the workspace and read-only commands in the sandbox run unasked; every write, other command "
        "and network access asks, as do protected files and anything outside the workspace"
    ),
    "auto": (
        "reads and writes in the workspace and read-only commands in the sandbox run unasked; other commands, "
        "network access, protected files and anything outside the workspace ask"
    ),
    "full": "nothing asks and nothing is contained (no sandbox): for disposable workspaces only",
    "risk_based": (
        "nobody is asked: reads, edits and writes in the workspace run, and so do read-only commands and commands "
        "that only create files or directories in the workspace, in the sandbox; everything else (other commands, "
        "network access, protected files, anything outside the workspace) is refused"
    ),
}

# Each mode's name in a picker (ACP's session modes).
MODE_NAMES: Final[Mapping[Mode, str]] = {
    "plan": "Plan",
    "ask": "Ask",
    "auto": "Auto",
    "full": "Full access",
    "risk_based": "Risk-based",
}

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
