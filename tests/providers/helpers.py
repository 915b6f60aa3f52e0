"""Helpers shared by the provider tests (fixtures live in conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx

from kgent.core.messages import AssistantMessage, UserMessage
from kgent.providers.base import ProviderRequest, StreamDone, StreamEvent
from kgent.providers.http import RetryPolicy

WIRES = ("openai", "anthropic")
FAST = RetryPolicy(base_delay=0.001, max_delay=0.01, max_retry_after=0.25)
KEY = "sk-test-DO-NOT-LEAK-1234567890"
TEXT = "Hello from the local model server."
HELLO = [[{"text": TEXT}]]


def request(text: str = "hi", **kw: Any) -> ProviderRequest:
    kw.setdefault("system_prompt", "You are a test.")
    kw.setdefault("messages", (UserMessage(text=text),))
    return ProviderRequest(**kw)


async def collect(stream: AsyncIterator[StreamEvent]) -> tuple[list[StreamEvent], AssistantMessage]:
    """All events of a stream; asserts the contract: exactly one StreamDone, and it is last."""
    events = [e async for e in stream]
    done = [e for e in events if isinstance(e, StreamDone)]
    assert len(done) == 1 and events[-1] is done[0], events
    return events, done[0].message


def sse_response(
    events: list[bytes], status: int = 200, content_type: str = "text/event-stream"
) -> httpx.Response:
    """A canned streamed response for MockTransport tests."""
    return httpx.Response(status, headers={"content-type": content_type}, content=b"".join(events))
