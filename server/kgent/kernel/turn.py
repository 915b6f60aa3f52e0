"""One model call: a provider request streamed into the run's events, ending in the finished assistant message.

The provider never raises (providers/base.py); a stream that ends without a message becomes an `error` message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from kgent.core.events import Event, MessageDelta, RetryEvent
from kgent.core.messages import AssistantMessage
from kgent.providers.base import Provider, ProviderRequest, StreamDone, StreamRetry, TextDelta, ThinkingDelta


async def stream_turn(
    provider: Provider, request: ProviderRequest, emit: Callable[[Event], None]
) -> AssistantMessage:
    """Stream one model call, emitting its deltas and retries; return its message (call ids made unique)."""
    message: AssistantMessage | None = None
    async for event in provider.stream(request):
        if type(event) is TextDelta:
            emit(MessageDelta(kind="text", delta=event.text))
        elif type(event) is ThinkingDelta:
            emit(MessageDelta(kind="thinking", delta=event.text))
        elif type(event) is StreamDone:
            message = event.message
        elif type(event) is StreamRetry:
            emit(
                RetryEvent(
                    attempt=event.attempt,
                    max_attempts=event.max_attempts,
                    delay_seconds=event.delay_seconds,
                    error=event.error,
                )
            )
    if message is None:
        message = AssistantMessage(
            stop_reason="error",
            error="the provider stream ended without a message",
            error_code="provider_error",
        )
    return unique_call_ids(message)


def unique_call_ids(message: AssistantMessage) -> AssistantMessage:
    """A model that repeats a tool-call id in one turn still gets one result per call: later twins are renamed."""
    ids = [c.id for c in message.tool_calls]
    if len(set(ids)) == len(ids):
        return message
    seen: set[str] = set()
    calls = []
    for n, call in enumerate(message.tool_calls):
        new_id = call.id if call.id not in seen else f"{call.id}-{n}"
        seen.add(new_id)
        calls.append(replace(call, id=new_id))
    return replace(message, tool_calls=tuple(calls))
