"""The provider seam: a model call is a request in, a stream of deltas out, ending in one finished message.

Contract: `Provider.stream` never raises into the loop for a model or transport failure. It ends with
`StreamDone(message)` whose `stop_reason` is `error` (with `error` / `error_code`) or `aborted`. Retries happen
inside the provider and are announced with `StreamRetry`. Task cancellation closes the stream at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kgent.core.messages import AssistantMessage, Message
from kgent.core.redact import remember_secret


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSchema:
    """What the model is told about one tool."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderRequest:
    system_prompt: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...] = ()
    model: str = ""
    max_tokens: int | None = None
    cache_key: str = ""  # a stable id of the conversation (the session's) for APIs that route caching by a key


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """The model began tool call `index` (its id and name are known)."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamRetry:
    attempt: int
    max_attempts: int
    delay_seconds: float
    error: str


@dataclass(frozen=True, slots=True)
class StreamDone:
    message: AssistantMessage


StreamEvent = TextDelta | ThinkingDelta | ToolCallStart | StreamRetry | StreamDone

# Error codes a StreamDone(stop_reason="error") may carry; the loop reacts to `context_overflow`.
CONTEXT_OVERFLOW = "context_overflow"


@runtime_checkable
class Provider(Protocol):
    """A model behind some wire format. `name` is the registry name (`openai`, `anthropic`, `scripted`)."""

    name: str
    model: str

    def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]: ...

    async def aclose(self) -> None: ...


REMOTE_FIRST_BYTE_TIMEOUT = 7.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderConfig:
    """How to reach a model. `api_key` is never logged, persisted or put in an event."""

    provider: str = "openai"
    model: str = ""
    base_url: str = ""
    api_key: str | None = field(default=None, repr=False)
    max_attempts: int = 3
    # A dead server fails within ~30 s over the 3 attempts (with the retries shown): connecting may take
    # `connect_timeout`, the response headers may take `first_byte_timeout` from sending the request (None: 7 s for
    # a remote host, `read_timeout` for a local one, which may be loading a model), and then the stream may be silent
    # for `read_timeout` between chunks (servers send keep-alives while they think).
    connect_timeout: float = 5.0
    first_byte_timeout: float | None = None
    read_timeout: float = 120.0
    max_tokens: int | None = None
    script: str | None = None

    def __post_init__(self) -> None:
        remember_secret(self.api_key)  # from now on no error text may carry it

    def time_to_first_byte(self) -> float:
        """The first-byte timeout in effect (see `first_byte_timeout`)."""
        if self.first_byte_timeout is not None:
            return self.first_byte_timeout
        local = any(h in self.base_url for h in ("://127.", "://localhost", "://[::1]", "://0.0.0.0"))
        return self.read_timeout if local else REMOTE_FIRST_BYTE_TIMEOUT
