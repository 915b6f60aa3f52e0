"""`kgent acp`'s process: logging to stderr (stdout carries ACP messages only), the agent on stdin/stdout.

`initialize` and a plain `session/new` are answered at once by stdlib code (kgent.acp.handshake) while a thread imports
the SDK (kgent.acp.sdk: its pydantic schema, built lazily) and the kernel; every other message waits for them, buffered, and
goes to the SDK; the agent adopts the sessions made meanwhile.
Meanwhile the sandbox is probed, and once the agent exists the service warms up for the first prompt."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import stat
import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from .guard import pump
from .handshake import ClientOffer, EarlySessions, answer, new_session

if TYPE_CHECKING:
    from acp import Agent

LIMIT = 50 * 1024 * 1024  # bytes of one line (the SDK's default stdio limit)


async def stdio_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Async stdin and stdout without the SDK (which Windows needs: there its own streams are used). Either may be a
    regular file (`kgent acp < recorded.jsonl > out.jsonl`), which asyncio's pipe transports refuse."""
    if sys.platform == "win32":  # pragma: no cover - the SDK's thread-fed streams
        from acp.stdio import stdio_streams as sdk_streams

        return await sdk_streams(limit=LIMIT)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LIMIT)
    if _is_stream(sys.stdin.fileno()):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    else:
        threading.Thread(
            target=_feed, args=(loop, reader, sys.stdin.fileno()), name="kgent-stdin", daemon=True
        ).start()
    if _is_stream(sys.stdout.fileno()):
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    else:
        transport, protocol = _FileWriter(sys.stdout.fileno()), asyncio.streams.FlowControlMixin()
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def _is_stream(fd: int) -> bool:
    """A pipe, a socket or a terminal (what asyncio's pipe transports take), not a regular file."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return True  # asyncio says what is wrong with it
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _feed(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int) -> None:
    """stdin from a regular file, read in this thread: a file's read never waits on anyone."""
    try:
        while data := os.read(fd, 1 << 16):
            loop.call_soon_threadsafe(reader.feed_data, data)
    except OSError as exc:
        logging.getLogger(__name__).warning("reading stdin failed: %s", exc)
    finally:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is reading
            loop.call_soon_threadsafe(reader.feed_eof)


class _FileWriter(asyncio.WriteTransport):
    """stdout redirected to a regular file: each write goes straight to it (a file takes a write at once)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def can_write_eof(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def abort(self) -> None:
        self._closing = True


def load_agent() -> Any:
    """`kgent.acp.agent`, the SDK under it imported the cheap way (kgent.acp.sdk), without garbage collection
    while it loads (kgent.core.loading)."""
    from kgent.core.loading import loading

    from .sdk import load

    with loading():
        load()
        return importlib.import_module("kgent.acp.agent")


def main(env: Mapping[str, str], *, log_level: str | None = None) -> int:
    level = (log_level or env.get("KGENT_LOG_LEVEL") or "WARNING").upper()
    logging.basicConfig(
        level=getattr(logging, level, logging.WARNING), format="%(name)s %(levelname)s %(message)s"
    )

    async def serve() -> None:
        from kgent.sandbox.bwrap import prefetch

        prefetch(env)  # the sandbox probe (a bwrap process) runs while the SDK loads, not in the first prompt
        offer, early = ClientOffer(), EarlySessions()

        async def intercept(message: dict[str, Any]) -> dict[str, Any] | None:
            return answer(message, offer, env) or await new_session(message, env, early)

        stdin, stdout = await stdio_streams()
        screened = asyncio.StreamReader(limit=LIMIT)
        reader = asyncio.get_running_loop().create_task(pump(stdin, screened, stdout, intercept))
        agent: Any = None
        try:
            loaded = await asyncio.to_thread(load_agent)
            from acp import run_agent

            agent = loaded.KgentAgent(env, offer, early)
            # What the first prompt needs, while the client sends session/new and the person types. A thread of its
            # own, not the loop's executor: a client that closes stdin meanwhile is not kept waiting for it (the
            # process exits below without joining it; the SDK's clients give an agent 2 s before they kill it).
            threading.Thread(target=agent.svc.warm_up, name="kgent-warm-up", daemon=True).start()
            # The SDK finds handlers by name and answers -32601 for those an agent leaves out, so KgentAgent
            # implements only what it supports, not the whole Agent protocol. The unstable protocol routes
            # session/fork, session/resume and session/close to it (Zed and the SDKs' clients already send them).
            await run_agent(cast("Agent", agent), stdout, screened, use_unstable_protocol=True)
        finally:
            reader.cancel()
            if agent is not None:
                await agent.aclose()  # every live prompt cancelled, the sessions flushed

    code = 0
    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    except BaseException:
        logging.getLogger(__name__).exception("kgent acp failed")
        code = 1
    # Exit now, as the daemon does: a worker thread (the warm-up's imports, a tool's blocking read) must not hold the
    # process once the client has gone; the sessions were flushed above.
    logging.shutdown()
    # stdout or stderr may be closed by its pipe's transport already, or its reader gone
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(dict(os.environ)))
