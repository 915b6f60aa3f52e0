"""Fixtures for provider tests: a real local model server, providers pointed at it, and stream collection."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest

from kgent.providers.anthropic import AnthropicProvider
from kgent.providers.base import ProviderConfig
from kgent.providers.http import RetryPolicy
from kgent.providers.openai import OpenAIProvider
from kgent.providers.streaming import HTTPProvider
from kgent.testing import ModelServer

from .helpers import FAST, HELLO, KEY, WIRES

CLASSES: dict[str, type[HTTPProvider]] = {"openai": OpenAIProvider, "anthropic": AnthropicProvider}


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    server = ModelServer(HELLO).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=WIRES)
def wire(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def make_provider(model_server: ModelServer) -> AsyncIterator[Callable[..., HTTPProvider]]:
    """`make_provider(wire, **config)`: a provider for the local server with fast retries; closed after the test."""
    made: list[HTTPProvider] = []

    def make(
        wire: str, *, retry: RetryPolicy = FAST, client: httpx.AsyncClient | None = None, **config: Any
    ) -> HTTPProvider:
        config.setdefault("base_url", model_server.base_url(wire))
        config.setdefault("model", "test-model")
        config.setdefault("api_key", KEY)
        provider = CLASSES[wire](ProviderConfig(provider=wire, **config), client=client, retry=retry)
        made.append(provider)
        return provider

    yield make
    for provider in made:
        await provider.aclose()
