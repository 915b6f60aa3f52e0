"""Which key a provider gets from the environment: KGENT_API_KEY first but only for the provider and host it was
configured for (KGENT_PROVIDER / KGENT_BASE_URL), a vendor's variable only for its host."""

from __future__ import annotations

import pytest

from kgent.config import provider_config, require_key
from kgent.core.errors import ConfigError

ALL_KEYS = {
    "DEEPSEEK_API_KEY": "sk-deepseek",
    "OPENAI_API_KEY": "sk-openai",
    "ANTHROPIC_API_KEY": "sk-anthropic",
}


@pytest.mark.parametrize(
    ("provider", "base_url", "key"),
    [
        ("openai", None, "sk-deepseek"),  # the default: DeepSeek
        ("openai", "https://api.deepseek.com/v1", "sk-deepseek"),
        ("openai", "https://api.openai.com/v1", "sk-openai"),
        ("anthropic", None, "sk-anthropic"),
        # anything else is not that vendor: its key must not travel there
        ("openai", "https://proxy.example/deepseek/v1", None),
        ("openai", "https://api.deepseek.com.evil.example/v1", None),
        ("openai", "http://127.0.0.1:11434/v1", None),
        ("anthropic", "https://gateway.example", None),
    ],
)
def test_vendor_keys_go_only_to_their_vendor(provider: str, base_url: str | None, key: str | None) -> None:
    config = provider_config(ALL_KEYS, provider=provider, base_url=base_url)
    assert config.api_key == key


def test_kgent_api_key_wins_everywhere_it_is_configured_for() -> None:
    env = ALL_KEYS | {"KGENT_API_KEY": "sk-kgent"}
    for provider, url in [("openai", None), ("openai", "https://proxy.example/v1"), ("anthropic", None)]:
        assert provider_config(env, provider=provider, base_url=url).api_key == "sk-kgent"


@pytest.mark.parametrize(
    ("provider", "base_url", "key"),
    [
        ("anthropic", None, "sk-anthropic"),  # a run that switches vendor: that vendor's key, never KGENT_API_KEY
        ("anthropic", "https://gateway.example", None),
        ("openai", "https://api.openai.com/v1", "sk-openai"),
        ("openai", None, "sk-deepseek"),
    ],
)
def test_a_switch_never_carries_kgent_api_key(provider: str, base_url: str | None, key: str | None) -> None:
    env = ALL_KEYS | {"KGENT_API_KEY": "sk-kgent"}
    assert provider_config(env, provider=provider, base_url=base_url, kgent_key=False).api_key == key
    only = {"KGENT_API_KEY": "sk-kgent"}
    assert provider_config(only, provider=provider, base_url=base_url, kgent_key=False).api_key is None


def test_env_selects_provider_model_and_url_and_flags_override() -> None:
    env = {"KGENT_PROVIDER": "anthropic", "KGENT_MODEL": "m1", "KGENT_BASE_URL": "http://127.0.0.1:9/"}
    config = provider_config(env)
    assert (config.provider, config.model, config.base_url) == ("anthropic", "m1", "http://127.0.0.1:9")
    config = provider_config(env, provider="deepseek", model="m2")
    assert (config.provider, config.model) == ("openai", "m2")


def test_a_remote_server_without_a_key_is_a_config_error_naming_the_variables() -> None:
    with pytest.raises(ConfigError) as missing:
        require_key(provider_config({}, provider="openai", base_url="https://proxy.example/v1"))
    assert "set KGENT_API_KEY" in missing.value.message and "https://proxy.example/v1" in missing.value.message
    require_key(provider_config({}, provider="openai", base_url="http://localhost:8080/v1"))  # local: no key needed
