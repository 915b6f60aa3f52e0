"""`kgent acp`'s process: logging to stderr (stdout carries ACP messages only), the agent on stdin/stdout."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from acp import Agent


def main(env: Mapping[str, str], *, log_level: str | None = None) -> int:
    from acp import run_agent
    from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES as LIMIT
    from acp.stdio import stdio_streams

    from .agent import KgentAgent
    from .guard import pump

    level = (log_level or env.get("KGENT_LOG_LEVEL") or "WARNING").upper()
    logging.basicConfig(
        level=getattr(logging, level, logging.WARNING), format="%(name)s %(levelname)s %(message)s"
    )

    async def serve() -> None:
        agent = KgentAgent(env)
        stdin, stdout = await stdio_streams(limit=LIMIT)
        screened = asyncio.StreamReader(limit=LIMIT)
        reader = asyncio.get_running_loop().create_task(pump(stdin, screened, stdout))
        try:
            # The SDK finds handlers by name and answers -32601 for those an agent leaves out (session/list, …),
            # so KgentAgent implements only what it supports, not the whole Agent protocol.
            await run_agent(cast("Agent", agent), stdout, screened)
        finally:
            reader.cancel()
            await agent.aclose()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(dict(os.environ)))
