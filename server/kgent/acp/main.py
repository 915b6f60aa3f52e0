"""`kgent acp`'s process: logging to stderr (stdout carries ACP messages only), the agent on stdin/stdout.

`initialize` and a plain `session/new` are answered at once by stdlib code (kgent.acp.handshake) while a thread imports
the SDK (kgent.acp.sdk: its pydantic schema, built lazily) and the kernel; every other message waits for them, buffered, and
goes to the SDK; the agent adopts the sessions made meanwhile.
Meanwhile the sandbox is probed, and once the agent exists the service warms up for the first prompt."""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
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
    """Async stdin and stdout without the SDK (which Windows needs: there its own streams are used)."""
    if sys.platform == "win32":  # pragma: no cover - the SDK's thread-fed streams
        from acp.stdio import stdio_streams as sdk_streams

        return await sdk_streams(limit=LIMIT)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


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
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(dict(os.environ)))
