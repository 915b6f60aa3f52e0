"""`python -m kgent.testing [--port N] [--script NAME|FILE] [--no-cache]`: run the local model server in the
foreground."""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from kgent.testing.model_server import ModelServer


def main(argv: list[str] | None = None) -> None:
    """Print the server's URL, then serve until killed."""
    parser = argparse.ArgumentParser(prog="python -m kgent.testing")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", default="hello")
    parser.add_argument("--no-cache", action="store_true", help="report no prompt-cache reads or writes")
    args = parser.parse_args(argv)

    async def run() -> None:
        server = ModelServer(args.script, cache=not args.no_cache)
        srv = await server.serve(args.port)
        print(server.url, flush=True)
        async with srv:
            await srv.serve_forever()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


if __name__ == "__main__":
    main()
