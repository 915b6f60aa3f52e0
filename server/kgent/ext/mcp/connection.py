"""One MCP server connection. A task of its own owns the SDK's transport and session (anyio wants them entered and
left by one task); calls come from the runs' tasks. A server that dies is noticed by the call it breaks, and the next
call starts it again; `notifications/tools/list_changed` marks its tool list stale (listed again on next use)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from kgent.core.errors import ExtensionError
from kgent.ext.config import McpServerConfig

log = logging.getLogger("kgent.ext.mcp")
START_TIMEOUT = (
    60.0  # seconds to start a server and list its tools (generous: a loaded machine starts slowly)
)


class ServerGone(Exception):
    """The server closed the connection (it crashed or exited) during a call."""


class McpConnection:
    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self.tools: list[types.Tool] = []
        self.error: str | None = None  # why the last start failed
        self.starts = 0  # how many times the server was started (restarts included)
        self._session: ClientSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()
        self._stale = False

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def running(self) -> bool:
        return self._session is not None and self._owner is not None and not self._owner.done()

    async def start(self) -> ClientSession:
        """The live session, starting (or restarting) the server first when needed; ExtensionError on failure."""
        async with self._lock:
            if not self.running:
                await self._start()
            elif self._stale:
                await self._list_tools()
            assert self._session is not None
            return self._session

    async def _start(self) -> None:
        await self._shut()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self.starts += 1
        self._owner = asyncio.create_task(self._own(ready), name=f"kgent-mcp-{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT)
        except TimeoutError:
            await self._shut()
            self.error = f"MCP server {self.name!r} did not start within {START_TIMEOUT:.0f} s"
            raise ExtensionError(self.error) from None
        except ExtensionError as exc:
            self.error = exc.message
            raise
        self.error = None

    async def _own(self, ready: asyncio.Future[None]) -> None:
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(
                    ClientSession(read, write, message_handler=self._on_message)
                )
                await session.initialize()
                self._session = session
                await self._list_tools()
                ready.set_result(None)
                await self._stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(
                    ExtensionError(f"MCP server {self.name!r} failed to start: {_describe(exc)}")
                )
            else:
                log.warning("MCP server %r stopped: %s", self.name, _describe(exc))
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(ExtensionError(f"MCP server {self.name!r} was stopped while starting"))
            raise
        finally:
            self._session = None

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        c = self.config
        if c.transport == "http":
            import httpx2

            async with httpx2.AsyncClient(
                headers=dict(c.headers), timeout=httpx2.Timeout(30.0, read=300.0)
            ) as http:
                async with streamable_http_client(c.url, http_client=http) as streams:
                    yield streams
        else:
            params = StdioServerParameters(
                command=c.command, args=list(c.args), env=dict(c.env) or None, cwd=c.cwd
            )
            async with stdio_client(params, errlog=sys.stderr) as streams:
                yield streams

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._stale = True

    async def _list_tools(self) -> None:
        session = self._session
        assert session is not None
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(100):  # a server that pages forever cannot hang us
            page = await session.list_tools(
                params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        self.tools, self._stale = tools, False

    async def refresh(self) -> list[types.Tool]:
        """The server's tools, started and listed again if stale."""
        await self.start()
        return self.tools

    async def call(self, tool: str, args: dict[str, Any]) -> types.CallToolResult:
        """Call `tool`. ServerGone when the connection dies meanwhile (the next call restarts the server)."""
        session = await self.start()
        try:
            return await session.call_tool(tool, args)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not self.running or _closed(exc):
                await self._shut()
                raise ServerGone(_describe(exc)) from exc
            raise

    async def _shut(self) -> None:
        """Stop the owner task (it closes the session and ends the server process), waiting at most ~20 s. Never
        raises the owner's own end (a cancellation of it must not look like the caller's)."""
        owner, self._owner = self._owner, None
        self._session = None
        if owner is None:
            return
        self._stop.set()
        done, _ = await asyncio.wait({owner}, timeout=10.0)
        if not done:
            owner.cancel()
            done, _ = await asyncio.wait({owner}, timeout=10.0)
        if done and not owner.cancelled():
            owner.exception()  # retrieved: _own logs what matters

    async def aclose(self) -> None:
        async with self._lock:
            await self._shut()


def _closed(exc: BaseException) -> bool:
    """Whether `exc` says the connection itself is gone (not that the server answered with an error)."""
    if isinstance(exc, MCPError):
        return exc.error.code == CONNECTION_CLOSED
    return isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | EOFError | BrokenPipeError)


def _describe(exc: BaseException) -> str:
    """An exception (or an exception group's first leaf) as one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"
