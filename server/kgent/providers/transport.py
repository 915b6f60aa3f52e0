"""The providers' HTTP transport: httpx's client over httpcore's pool on a network backend of plain asyncio.

httpcore's default backend on asyncio is anyio's, which opens a cancel scope (`anyio.fail_after`) around every read
and write: on a streamed answer, one per chunk, the largest single cost of a model call on the async stack
(docs/benchmarks.md). Here a read that finds data buffered returns it without a timer, and one that waits arms one
`call_later`. Both halves are httpcore's and httpx's public seams (`AsyncNetworkBackend`, `AsyncBaseTransport`);
exceptions are mapped as httpx maps its own transport's, so a caller sees the same httpx errors.
"""

# ruff: noqa: ASYNC109 - httpcore's AsyncNetworkStream and AsyncNetworkBackend take their timeouts as parameters
from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

import httpcore
import httpx

_PAUSE_AT = 1 << 20  # bytes buffered before the socket's reading pauses (a caller that is not reading)

# httpcore's errors → httpx's, most specific first (what httpx's own transport maps them to)
_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _mapped() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for theirs, ours in _ERRORS:
            if isinstance(exc, theirs):
                raise ours(str(exc)) from exc
        raise


class _Socket(asyncio.Protocol):
    """What the event loop read from one connection, and whether writing must wait (flow control)."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.closed = False
        self.error: BaseException | None = None
        self.transport: asyncio.BaseTransport | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        self._drained: asyncio.Future[None] | None = None
        self.reading_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > _PAUSE_AT and not self.reading_paused:
            self.pause_reading()
        self._wake()

    def pause_reading(self) -> None:
        if isinstance(self.transport, asyncio.ReadTransport):
            self.reading_paused = True
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if isinstance(self.transport, asyncio.ReadTransport):
            self.reading_paused = False
            self.transport.resume_reading()

    def eof_received(self) -> bool:
        self.closed = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed, self.error = True, exc
        self._wake()
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def wait(self, what: str, timeout: float | None) -> None:
        """Until data (what="read") or room to write (what="write") or the end; a timeout raises httpcore's."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if what == "read":
            self._waiter = future
        else:
            self._drained = future
        error = httpcore.ReadTimeout if what == "read" else httpcore.WriteTimeout
        timer = None if timeout is None else loop.call_later(timeout, _expire, future, error)
        try:
            await future
        finally:
            if timer is not None:
                timer.cancel()
            self._waiter = None if what == "read" else self._waiter
            self._drained = None if what == "write" else self._drained

    @property
    def paused(self) -> bool:
        return self._paused


def _expire(future: asyncio.Future[None], error: type[Exception]) -> None:
    if not future.done():
        future.set_exception(error("timed out"))


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection (plain or TLS) read and written on the event loop."""

    def __init__(self, transport: asyncio.Transport, socket: _Socket) -> None:
        self._transport = transport
        self._socket = socket

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        s = self._socket
        if not s.buffer and not s.closed:
            await s.wait("read", timeout)
        if s.buffer:
            data = bytes(s.buffer[:max_bytes])
            del s.buffer[:max_bytes]
            if s.reading_paused and len(s.buffer) <= _PAUSE_AT and not s.closed:
                s.resume_reading()
            return data
        if s.error is not None:
            raise httpcore.ReadError(str(s.error) or type(s.error).__name__)
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        if self._socket.closed or self._transport.is_closing():
            raise httpcore.WriteError("the connection is closed")
        self._transport.write(buffer)
        if self._socket.paused:
            await self._socket.wait("write", timeout)

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                tls = await loop.start_tls(
                    self._transport, self._socket, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError:
            self._transport.close()
            raise httpcore.ConnectTimeout("the TLS handshake timed out") from None
        except (OSError, ssl.SSLError) as exc:
            self._transport.close()
            raise httpcore.ConnectError(str(exc)) from exc
        if tls is None:  # pragma: no cover - only when the loop closed the connection meanwhile
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        return AsyncioStream(tls, self._socket)

    def get_extra_info(self, info: str) -> Any:
        if (
            info == "is_readable"
        ):  # an idle keep-alive connection the server closed (or wrote to) is not reused
            return self._socket.closed or bool(self._socket.buffer)
        name = {"client_addr": "sockname", "server_addr": "peername"}.get(info, info)
        return (
            self._transport.get_extra_info(name)
            if name in ("ssl_object", "sockname", "peername", "socket")
            else None
        )


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend on the running asyncio loop."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        try:
            async with asyncio.timeout(timeout):
                transport, socket = await loop.create_connection(_Socket, host, port, local_addr=local)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"connecting to {host}:{port} timed out") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        raw = transport.get_extra_info("socket")
        for option in socket_options or ():
            raw.setsockopt(*option)
        return AsyncioStream(transport, socket)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, socket = await loop.create_unix_connection(_Socket, path)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"connecting to {path} timed out") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        return AsyncioStream(transport, socket)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class _Body(httpx.AsyncByteStream):
    def __init__(self, stream: AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _mapped():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        aclose = getattr(self._stream, "aclose", None)
        if aclose is not None:
            with _mapped():
                await aclose()


class AsyncioTransport(httpx.AsyncBaseTransport):
    """httpx's transport for one provider: httpcore's keep-alive pool on AsyncioBackend (HTTP/1.1; proxies from the
    environment are still httpx's own transports, which the client mounts beside this one)."""

    def __init__(self, ssl_context: ssl.SSLContext, limits: httpx.Limits | None = None) -> None:
        limits = limits or httpx.Limits(
            max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0
        )
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=AsyncioBackend(),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        url = request.url
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _mapped():
            response = await self._pool.handle_async_request(core)
        assert isinstance(response.stream, AsyncIterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
