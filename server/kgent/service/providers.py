"""ProviderPool: one provider per distinct configuration, so HTTP clients are reused across runs and fronts."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

from kgent.providers import create_provider
from kgent.providers.base import Provider, ProviderConfig

log = logging.getLogger("kgent.service")


class ProviderPool:
    """One provider per distinct ProviderConfig (the fronts resolve the config: run > connection > environment)."""

    def __init__(self, create: Callable[[ProviderConfig], Provider] = create_provider) -> None:
        """`create` builds a provider: the built-in registry, or kgent.ext.Extensions.create_provider (which knows
        the extensions' providers too)."""
        self._create = create
        self._cache: dict[tuple[Any, ...], Provider] = {}
        self._lock = (
            threading.Lock()
        )  # providers may be built in a worker thread (their first import is slow)

    @staticmethod
    def _key(config: ProviderConfig) -> tuple[Any, ...]:
        return (config.provider, config.model, config.base_url, config.api_key, config.script)

    def cached(self, config: ProviderConfig) -> Provider | None:
        return self._cache.get(self._key(config))

    def get(self, config: ProviderConfig) -> Provider:
        """The provider for `config`, created on first use (thread-safe; may import and load TLS certificates)."""
        with self._lock:
            provider = self._cache.get(self._key(config))
            if provider is None:
                provider = self._cache[self._key(config)] = self._create(config)
            return provider

    async def aget(self, config: ProviderConfig) -> Provider:
        """`get` without blocking the event loop when the provider is new."""
        provider = self.cached(config)
        return provider if provider is not None else await asyncio.to_thread(self.get, config)

    async def aclose(self) -> None:
        providers, self._cache = list(self._cache.values()), {}
        for provider in providers:
            try:
                await provider.aclose()
            except Exception:  # closing is best effort at exit
                log.debug("closing a provider failed", exc_info=True)
