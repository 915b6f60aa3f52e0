"""Providers by short name, imported lazily so start-up stays fast and optional parts stay optional."""

from __future__ import annotations

import importlib

from kgent.core.errors import ConfigError
from kgent.providers.base import Provider, ProviderConfig, ProviderRequest, ToolSchema

PROVIDERS: dict[str, str] = {
    "openai": "kgent.providers.openai:OpenAIProvider",
    "anthropic": "kgent.providers.anthropic:AnthropicProvider",
    "scripted": "kgent.providers.scripted:ScriptedProvider",
}
ALIASES = {"deepseek": "openai", "openai-compatible": "openai", "claude": "anthropic", "fake": "scripted"}


def provider_names() -> list[str]:
    return sorted(PROVIDERS)


def create_provider(config: ProviderConfig) -> Provider:
    """A provider for `config`; ConfigError names the valid choices or the missing setting."""
    name = ALIASES.get(config.provider, config.provider)
    target = PROVIDERS.get(name)
    if target is None:
        raise ConfigError(f"unknown provider {config.provider!r}: use one of {', '.join(provider_names())}")
    module_name, cls_name = target.split(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    if name == "scripted":
        provider: Provider = cls(config.script or config.model or "hello")
        return provider
    provider = cls(config)
    return provider


__all__ = [
    "PROVIDERS",
    "Provider",
    "ProviderConfig",
    "ProviderRequest",
    "ToolSchema",
    "create_provider",
    "provider_names",
]
