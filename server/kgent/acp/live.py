"""LiveOutput: a running command's output as `tool_call_update`s while it runs, throttled per tool call — at most
one update per `interval`, the newest text winning, and the last text sent once the interval has passed (so output
that then stops is not held back until the command ends)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

INTERVAL = 0.25  # seconds between two updates of one call: each carries the whole tail shown so far


class LiveOutput:
    """`feed` the output so far as it grows; `end` before the call's final update, so no stale text follows it."""

    def __init__(self, send: Callable[[str, str], Awaitable[None]], interval: float = INTERVAL) -> None:
        self.send = send  # (tool call id, output so far)
        self.interval = interval
        self._latest: dict[str, str] = {}
        self._sent_at: dict[str, float] = {}
        self._flush: dict[str, asyncio.Task[None]] = {}
        self._sending: set[str] = set()  # calls whose delayed send is writing now

    async def feed(self, call_id: str, text: str) -> None:
        self._latest[call_id] = text
        if call_id in self._flush:  # a flush is due: it sends the newest text
            return
        wait = self._sent_at.get(call_id, -self.interval) + self.interval - time.monotonic()
        if wait <= 0:
            await self._send(call_id)
        else:
            self._flush[call_id] = asyncio.get_running_loop().create_task(self._later(call_id, wait))

    async def _later(self, call_id: str, wait: float) -> None:
        try:
            while call_id in self._latest:  # text fed while a send was under way goes out one interval later
                await asyncio.sleep(wait)
                self._sending.add(call_id)
                try:
                    await self._send(call_id)
                finally:
                    self._sending.discard(call_id)
                wait = self.interval
        finally:
            if self._flush.get(call_id) is asyncio.current_task():
                del self._flush[call_id]

    async def _send(self, call_id: str) -> None:
        text = self._latest.pop(call_id, None)
        if text is None:
            return
        self._sent_at[call_id] = time.monotonic()
        await self.send(call_id, text)

    async def end(self, call_id: str) -> None:
        """Drop the call's pending text; a send already under way finishes first (updates keep their order)."""
        self._latest.pop(call_id, None)
        self._sent_at.pop(call_id, None)
        task = self._flush.pop(call_id, None)
        if task is None:
            return
        if call_id in self._sending:
            await asyncio.wait({task})
        else:
            task.cancel()

    def close(self) -> None:
        for task in self._flush.values():
            task.cancel()
        self._flush.clear()
        self._latest.clear()
