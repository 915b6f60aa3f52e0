"""Token accounting for the context: a chars/4 estimate per message, the provider's reported usage where it is
trustworthy, and the context window of each model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from kgent.core.images import IMAGE_TOKENS
from kgent.core.messages import (
    AssistantMessage,
    InstructionsMessage,
    Message,
    SummaryMessage,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from kgent.providers.base import ToolSchema

# Context windows in tokens, by model name (exact, then the longest matching prefix), then by provider.
MODEL_WINDOWS: dict[str, int] = {
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
    "deepseek": 128_000,
    "claude": 200_000,
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
}
PROVIDER_WINDOWS: dict[str, int] = {"anthropic": 200_000, "openai": 128_000, "scripted": 32_768}
DEFAULT_WINDOW = 128_000


def context_window(provider: str, model: str) -> int:
    """The model's context window in tokens (a table lookup; unknown models get DEFAULT_WINDOW)."""
    if model in MODEL_WINDOWS:
        return MODEL_WINDOWS[model]
    prefixes = [p for p in MODEL_WINDOWS if model.startswith(p)]
    if prefixes:
        return MODEL_WINDOWS[max(prefixes, key=len)]
    return PROVIDER_WINDOWS.get(provider, DEFAULT_WINDOW)


def prompt_tokens(usage: Usage) -> int:
    """All input tokens of a call, however they were billed: a fully cached prompt reports no plain input tokens."""
    return usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens


def estimate_text(text: str) -> int:
    """ceil(len(text) / 4): the usual characters-per-token rule of thumb."""
    return -(-len(text) // 4)


def estimate_message(message: Message) -> int:
    """Estimated tokens of one message: ceil(chars / 4) over its text, thinking, tool calls and results, plus
    IMAGE_TOKENS for each image."""
    match message:
        case UserMessage(text=text, images=images):
            chars = len(text) + 4 * IMAGE_TOKENS * len(
                images
            )  # an image costs tokens by its size, not its bytes
        case SummaryMessage(text=text) | InstructionsMessage(text=text):
            chars = len(text)
        case ToolResultMessage():
            chars = len(message.content) + len(message.name)
        case AssistantMessage():
            chars = len(message.text) + len(message.thinking)
            for call in message.tool_calls:
                chars += len(call.name) + len(json.dumps(call.arguments, ensure_ascii=False))
        case _:
            chars = len(str(message))
    return -(-chars // 4)


def estimate_overhead(system_prompt: str, tools: Sequence[ToolSchema] = ()) -> int:
    """Estimated tokens of what every request carries besides the messages: the system prompt and tool schemas."""
    schemas = json.dumps(
        [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]
    )
    return estimate_text(system_prompt) + (estimate_text(schemas) if tools else 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextEstimate:
    """`tokens` = `reported` (the provider's usage for the request that produced the last trusted assistant
    message, plus that message's output) + `estimated` (chars/4 of everything after it; of everything, plus the
    overhead, when no usage can be trusted)."""

    tokens: int
    reported: int
    estimated: int
    source: str  # "usage+estimate" or "estimate"


def estimate_context(
    messages: Sequence[Message], *, trusted_from: int = 0, overhead: int = 0
) -> ContextEstimate:
    """Estimate the tokens of a request carrying `messages`.

    Prefers provider-reported usage: the last assistant message at index ≥ `trusted_from` with usage gives
    input (+ cache read/write) + output tokens, and the messages after it are estimated at chars/4. Usage of
    earlier messages is not trusted: it was measured on a context that compaction has since replaced.
    """
    for i in range(len(messages) - 1, trusted_from - 1, -1):
        m = messages[i]
        if isinstance(m, AssistantMessage) and m.usage is not None and prompt_tokens(m.usage) > 0:
            reported = prompt_tokens(m.usage) + m.usage.output_tokens
            estimated = sum(estimate_message(x) for x in messages[i + 1 :])
            return ContextEstimate(
                tokens=reported + estimated, reported=reported, estimated=estimated, source="usage+estimate"
            )
    estimated = overhead + sum(estimate_message(x) for x in messages)
    return ContextEstimate(tokens=estimated, reported=0, estimated=estimated, source="estimate")


class RunningEstimate:
    """`estimate_context` kept up to date as a history grows, so each request costs only its new messages.

    The loop only appends to its history; a history that was replaced (after a compaction) or shortened is
    recomputed from scratch.
    """

    def __init__(self, *, trusted_from: int = 0, overhead: int = 0) -> None:
        self.trusted_from = trusted_from
        self.overhead = overhead
        self._seen = 0
        self._last: Message | None = None
        self._reported: int | None = None
        self._after = 0  # chars/4 of the messages after the last trusted usage (of all of them, without one)

    def restart(self, trusted_from: int) -> None:
        self.trusted_from, self._seen, self._last, self._reported, self._after = (
            trusted_from,
            0,
            None,
            None,
            0,
        )

    def update(self, messages: Sequence[Message]) -> ContextEstimate:
        if self._seen > len(messages) or (self._seen and messages[self._seen - 1] is not self._last):
            self.restart(self.trusted_from)
        for i in range(self._seen, len(messages)):
            m = messages[i]
            if (
                i >= self.trusted_from
                and isinstance(m, AssistantMessage)
                and m.usage is not None
                and prompt_tokens(m.usage) > 0
            ):
                self._reported = prompt_tokens(m.usage) + m.usage.output_tokens
                self._after = 0
            else:
                self._after += estimate_message(m)
        self._seen = len(messages)
        self._last = messages[-1] if messages else None
        if self._reported is not None:
            return ContextEstimate(
                tokens=self._reported + self._after,
                reported=self._reported,
                estimated=self._after,
                source="usage+estimate",
            )
        estimated = self.overhead + self._after
        return ContextEstimate(tokens=estimated, reported=0, estimated=estimated, source="estimate")
