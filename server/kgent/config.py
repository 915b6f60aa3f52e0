"""Configuration from the environment (KGENT_*), overridable by flags, `initialize` or a run's params.

API keys are looked up here and nowhere else; they live only in ProviderConfig.api_key (repr-hidden).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, TypedDict

from kgent.core.errors import ConfigError
from kgent.providers import ALIASES
from kgent.providers.base import ProviderConfig
from kgent.providers.keys import key_env_names
from kgent.providers.pricing import PriceTable, builtin_prices, load_prices

DEFAULTS = {
    "openai": ("https://api.deepseek.com", "deepseek-chat"),
    "anthropic": ("https://api.anthropic.com", "claude-sonnet-4-5"),
    "scripted": ("", "hello"),
}


def normalize_provider(raw: str) -> str:
    """A provider name or alias (any case) as the registry names it."""
    name = raw.strip().lower()
    return ALIASES.get(name, name)


def provider_config(
    env: Mapping[str, str] | None = None,
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    script: str | None = None,
    kgent_key: bool = True,
) -> ProviderConfig:
    """Resolve a ProviderConfig: explicit arguments, then KGENT_* variables, then defaults.

    KGENT_API_KEY is the key of the configured provider (the environment, flags, an editor's settings). A caller
    that switches away from it for one run — a resumed session of another provider — passes `kgent_key=False`, so
    that key never travels to another vendor's host; vendor variables (ANTHROPIC_API_KEY …) go only to their
    vendor's host (kgent.providers.keys)."""
    env = os.environ if env is None else env
    name = (provider or env.get("KGENT_PROVIDER") or "openai").strip().lower()
    name = ALIASES.get(name, name)
    default_url, default_model = DEFAULTS.get(name, ("", ""))
    url = (base_url or env.get("KGENT_BASE_URL") or default_url).rstrip("/")
    chosen_model = model or env.get("KGENT_MODEL") or default_model
    key = api_key
    if key is None:
        for var in key_env_names(name, url):
            if var == "KGENT_API_KEY" and not kgent_key:
                continue
            if env.get(var):
                key = env[var]
                break
    config = ProviderConfig(provider=name, model=chosen_model, base_url=url, api_key=key, script=script)
    limits = timeouts(env)
    return replace(
        config,
        connect_timeout=limits.get("connect_timeout", config.connect_timeout),
        first_byte_timeout=limits.get("first_byte_timeout", config.first_byte_timeout),
        read_timeout=limits.get("read_timeout", config.read_timeout),
    )


_TIMEOUT_ENV = {
    "KGENT_CONNECT_TIMEOUT": "connect_timeout",
    "KGENT_FIRST_BYTE_TIMEOUT": "first_byte_timeout",
    "KGENT_READ_TIMEOUT": "read_timeout",
}


def timeouts(env: Mapping[str, str]) -> dict[str, float]:
    """ProviderConfig timeouts from KGENT_CONNECT_TIMEOUT / KGENT_FIRST_BYTE_TIMEOUT / KGENT_READ_TIMEOUT (seconds
    > 0; anything else is a ConfigError naming the variable)."""
    out: dict[str, float] = {}
    for var, key in _TIMEOUT_ENV.items():
        raw = env.get(var)
        if not raw:
            continue
        try:
            value = float(raw)
        except ValueError:
            value = 0.0
        if not 0 < value < 1e6:
            raise ConfigError(f"{var} must be a number of seconds > 0, got {raw!r}")
        out[key] = value
    return out


def with_overrides(config: ProviderConfig, **overrides: str | None) -> ProviderConfig:
    """Apply the non-None overrides (provider, model, base_url, api_key)."""
    changes: dict[str, Any] = {k: v for k, v in overrides.items() if v is not None}
    return replace(config, **changes)


def permission_mode(env: Mapping[str, str] | None = None, explicit: str | None = None) -> str:
    env = os.environ if env is None else env
    return explicit or env.get("KGENT_PERMISSION_MODE") or "ask"


def require_key(config: ProviderConfig) -> None:
    """Raise ConfigError naming exactly what to set when a remote provider has no key (local servers may not need one)."""
    if config.provider not in ("openai", "anthropic") or config.api_key:
        return
    local = any(h in config.base_url for h in ("://127.", "://localhost", "://[::1]", "://0.0.0.0"))
    if local:
        return
    names = " or ".join(key_env_names(config.provider, config.base_url))
    raise ConfigError(
        f"no API key for provider {config.provider!r} at {config.base_url}: set {names} "
        "(or use the scripted provider to try Kgent without a key)",
        code="missing_api_key",
    )


_CONTEXT_ENV = {
    "KGENT_CONTEXT_WINDOW": "context_window",
    "KGENT_RESERVE_TOKENS": "reserve_tokens",
    "KGENT_KEEP_RECENT_TOKENS": "keep_recent_tokens",
}


class ContextOverrides(TypedDict, total=False):
    """The KernelConfig fields the environment may set."""

    context_window: int
    reserve_tokens: int
    keep_recent_tokens: int


def context_overrides(env: Mapping[str, str] | None = None) -> ContextOverrides:
    """KernelConfig fields from KGENT_CONTEXT_WINDOW / KGENT_RESERVE_TOKENS / KGENT_KEEP_RECENT_TOKENS (positive
    integers; anything else is a ConfigError naming the variable)."""
    env = os.environ if env is None else env
    out = ContextOverrides()
    for var, key in _CONTEXT_ENV.items():
        raw = env.get(var)
        if not raw:
            continue
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value <= 0:
            raise ConfigError(f"{var} must be a positive number of tokens, got {raw!r}")
        out[key] = value  # type: ignore[literal-required]  # key is one of _CONTEXT_ENV's values
    return out


def prices(env: Mapping[str, str] | None = None) -> PriceTable:
    """The model price table: the built-in one, updated from the JSON file KGENT_PRICES names (same shape as
    kgent/providers/prices.json), and the models KGENT_VISION_MODELS names (comma-separated) marked as taking
    images; ConfigError when that file cannot be read."""
    env = os.environ if env is None else env
    path = env.get("KGENT_PRICES")
    table = load_prices(path) if path else builtin_prices()
    seeing = [m.strip() for m in env.get("KGENT_VISION_MODELS", "").split(",") if m.strip()]
    return table.updated(PriceTable({}, dict.fromkeys(seeing, True))) if seeing else table


def cost_limit(env: Mapping[str, str] | None = None, explicit: float | None = None) -> float | None:
    """A run's cost limit in US dollars: `explicit`, else KGENT_COST_LIMIT, else None (ConfigError naming the
    variable unless it is a positive number)."""
    if explicit is not None:
        return explicit
    env = os.environ if env is None else env
    raw = env.get("KGENT_COST_LIMIT")
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise ConfigError(f"KGENT_COST_LIMIT must be a positive number of US dollars, got {raw!r}")
    return value


DEFAULT_MAX_TURNS = 200  # SWE-bench-style tasks often take 50–150 model turns


def max_turns(env: Mapping[str, str] | None = None, explicit: int | None = None) -> int:
    """A run's turn limit (model calls): `explicit`, else KGENT_MAX_TURNS, else DEFAULT_MAX_TURNS (ConfigError naming
    the variable or the value unless it is a positive integer)."""
    if explicit is not None:
        if isinstance(explicit, bool) or not isinstance(explicit, int) or explicit <= 0:
            raise ConfigError(f"max turns must be a positive integer, got {explicit!r}")
        return explicit
    env = os.environ if env is None else env
    raw = env.get("KGENT_MAX_TURNS", "").strip()
    if not raw:
        return DEFAULT_MAX_TURNS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError(f"KGENT_MAX_TURNS must be a positive integer (model turns), got {raw!r}")
    return value
