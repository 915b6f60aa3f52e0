"""HTTPProvider: one streamed POST per model call, retried before any output, decoded by a vendor's `Decoder`.

Contract (see providers/base.py): `stream` never raises for a model or transport failure; it ends with exactly
one `StreamDone`. A failure is retried (with a `StreamRetry` first) only while nothing was yielded, so output
the user has seen is never duplicated; after that the turn ends `error` with the partial text kept.
Cancellation is not caught: the response's context manager closes the connection at once and `CancelledError`
propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Protocol

from kgent.core.errors import ProviderError
from kgent.core.messages import AssistantMessage
from kgent.providers.base import ProviderConfig, ProviderRequest, StreamDone, StreamEvent, StreamRetry
from kgent.providers.http import (
    MAX_ERROR_BODY,
    Endpoint,
    RetryPolicy,
    new_client,
    status_error,
    transport_error,
)
from kgent.providers.sse import SSEParser

if TYPE_CHECKING:
    import httpx


class Decoder(Protocol):
    """Turns one response's server-sent events into stream events, then into the finished message."""

    def feed(self, event: str, data: bytes) -> list[StreamEvent] | None:
        """Events for one SSE event; raises ProviderError for an error event or undecodable data."""
        ...

    def finish(self) -> AssistantMessage:
        """The finished message; raises ProviderError when the stream ended before the vendor's end marker."""
        ...

    def partial(self, error: ProviderError) -> AssistantMessage:
        """An `error` message keeping what was streamed before `error`."""
        ...


class HTTPProvider(ABC):
    """Base of the real providers: owns the client and the retry loop; subclasses build requests and decoders."""

    name = "http"
    default_base_url = ""
    default_model = ""

    def __init__(
        self,
        config: ProviderConfig,
        *,
        client: httpx.AsyncClient | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.config = config
        self.model = config.model or self.default_model
        self.base_url = (config.base_url or self.default_base_url).rstrip("/")
        self.max_attempts = max(1, config.max_attempts)
        self.retry = retry or RetryPolicy()
        # The client is made by the first request (or `warm`): httpx loads then, not with the provider (http.py).
        self._client = client
        self._owns_client = client is None
        self._client_lock = threading.Lock()  # the warm-up thread and the first request may both ask
        self.url = self._url()
        self._headers = self._request_headers()
        self._where = Endpoint(
            provider=self.name, url=self.url, model=self.model, has_key=bool(config.api_key)
        )
        self._setup()

    def http(self) -> httpx.AsyncClient:
        """The provider's one client, made on first use (thread-safe: a worker thread may warm it)."""
        client = self._client
        if client is None:
            with self._client_lock:
                client = self._client
                if client is None:
                    client = self._client = new_client(self.config)
        return client

    def warm(self) -> None:
        """Make the client now (its imports and TLS context), so the first request does not."""
        self.http()

    # -- what a vendor module supplies -----------------------------------------------------------------------
    def _setup(self) -> None:  # noqa: B027 - optional hook, most vendors need nothing here
        """Per-provider state (encoders, caches), made once at construction."""

    @abstractmethod
    def _url(self) -> str: ...

    @abstractmethod
    def _request_headers(self) -> dict[str, str]: ...

    @abstractmethod
    def _body(self, request: ProviderRequest) -> bytes: ...

    @abstractmethod
    def _decoder(self) -> Decoder: ...

    # -- the shared stream ----------------------------------------------------------------------------------
    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        import httpx  # loaded once the first client is made (below, or by `warm`); named here for its errors

        body = self._body(request)
        attempt = 1
        while True:
            decoder = self._decoder()
            emitted = False
            try:
                async with contextlib.AsyncExitStack() as stack:
                    response = await self._open(stack, body)
                    if response.status_code != 200:
                        raise status_error(
                            response.status_code,
                            await _read_capped(response),
                            response.headers,
                            self._where,
                            self.config.api_key,
                        )
                    _check_event_stream(response, self._where)
                    parser = SSEParser()
                    async for chunk in response.aiter_bytes():
                        for event, data in parser.feed(chunk):
                            out = decoder.feed(event, data)
                            if out:
                                emitted = True
                                for item in out:
                                    yield item
                    for event, data in parser.close():
                        out = decoder.feed(event, data)
                        if out:
                            emitted = True
                            for item in out:
                                yield item
                    message = decoder.finish()
            except ProviderError as exc:
                error = exc
            except httpx.HTTPError as exc:
                error = transport_error(exc, self._where)
                if emitted:
                    error = ProviderError(
                        f"The stream from {self._where.url} broke after output began: {error.message}",
                        code="stream_error",
                    )
            else:
                yield StreamDone(message)
                return
            if error.retryable and not emitted and attempt < self.max_attempts:
                delay = self.retry.delay(attempt, error.retry_after)
                yield StreamRetry(
                    attempt=attempt, max_attempts=self.max_attempts, delay_seconds=delay, error=error.message
                )
                await asyncio.sleep(delay)
                attempt += 1
                continue
            if error.retryable and attempt > 1:
                error = ProviderError(f"{error.message} (gave up after {attempt} attempts)", code=error.code)
            yield StreamDone(decoder.partial(error))
            return

    async def _open(self, stack: contextlib.AsyncExitStack, body: bytes) -> httpx.Response:
        """Send the request and wait for the response headers, at most the first-byte timeout."""
        limit = self.config.time_to_first_byte()
        try:
            async with asyncio.timeout(limit):
                return await stack.enter_async_context(
                    self.http().stream("POST", self.url, content=body, headers=self._headers)
                )
        except TimeoutError:
            raise ProviderError(
                f"The model server at {self._where.url} sent no response within {limit:g} s "
                "(first-byte timeout)",
                code="provider_timeout",
                retryable=True,
            ) from None

    async def aclose(self) -> None:
        if self._owns_client and self._client is not None:
            await self._client.aclose()


async def _read_capped(response: httpx.Response) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size >= MAX_ERROR_BODY:
            break
    return b"".join(parts)[:MAX_ERROR_BODY]


def _check_event_stream(response: httpx.Response, where: Endpoint) -> None:
    ctype = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if ctype != "text/event-stream":
        raise ProviderError(
            f"The model server at {where.url} answered with {ctype or 'no content type'} instead of an event stream "
            "(text/event-stream): is this the right base URL, and does the server support streaming?",
            code="stream_error",
        )
