# Concept: the model each instance talks to — a fresh provider per instance, from one ProviderConfig.
"""For the scripted provider, `--script DIR` gives each instance its own script: `DIR/<instance_id>.json`, else
`DIR/default.json` (dry runs of the evaluator, and its tests). Any other script or provider is the same for all."""

from __future__ import annotations

from pathlib import Path

from kgent.core.errors import ConfigError
from kgent.providers import ALIASES, PROVIDERS, ProviderConfig, create_provider, provider_names
from kgent.providers.base import Provider
from kgent.providers.scripted import ScriptedProvider, load_script
from kgent.swebench.instances import Instance
from kgent.swebench.runner import ProviderFactory


def provider_factory(config: ProviderConfig) -> ProviderFactory:
    """A function making each instance's provider; ConfigError now for what would fail every instance."""
    script_dir = Path(config.script) if config.provider == "scripted" and config.script else None
    if script_dir is not None and script_dir.is_dir():
        if not any(script_dir.glob("*.json")):
            raise ConfigError(
                f"--script {script_dir}: the directory holds no <instance_id>.json or default.json"
            )

        def scripted(instance: Instance) -> Provider:
            path = script_dir / f"{instance.instance_id}.json"
            if not path.is_file():
                path = script_dir / "default.json"
            if not path.is_file():
                raise ConfigError(f"no script for {instance.instance_id} in {script_dir} (nor default.json)")
            return ScriptedProvider(load_script(str(path)), model=path.stem)

        return scripted
    name = ALIASES.get(
        config.provider, config.provider
    )  # an unknown provider or script fails here, not per instance
    if name not in PROVIDERS:
        raise ConfigError(f"unknown provider {config.provider!r}: use one of {', '.join(provider_names())}")
    if name == "scripted":
        load_script(config.script or config.model or "hello")

    def shared_config(instance: Instance) -> Provider:
        return create_provider(config)

    return shared_config
