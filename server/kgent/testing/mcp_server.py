"""A small MCP server (the mcp SDK's MCPServer, stdio) for tests and demos of failure paths: `echo`, `image`, `big`
(output past the truncation limit), `crash` (the process dies mid-call), `slow` (sleeps; writes MARKER.cancelled when
a cancel reaches it), `malformed` (answers with a result that breaks the protocol's shape) and `grow` (adds a tool
and sends `notifications/tools/list_changed`).

    python -m kgent.testing.mcp_server [MARKER_DIR]              (stdio)
    python -m kgent.testing.mcp_server MARKER_DIR --http PORT    (streamable HTTP on 127.0.0.1:PORT/mcp)

Over HTTP, `whoami` answers the request's Authorization header (to check configured headers arrive).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image

server = MCPServer("kgent-test")
MARKERS = Path(sys.argv[1]) if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else Path.cwd()
WIRE = os.dup(
    1
)  # the protocol's stdout, kept before the SDK diverts fd 1 (the `malformed` tool writes to it)
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@server.tool()
def echo(text: str) -> str:
    """Answer with the text."""
    return f"echo: {text}"


@server.tool()
def image() -> Image:
    """A 1x1 PNG."""
    return Image(data=PNG, format="png")


@server.tool()
def big(lines: int = 5000) -> str:
    """Many numbered lines."""
    return "\n".join(f"line {n}" for n in range(lines))


@server.tool()
def crash() -> str:
    """The server process exits in the middle of the call."""
    os._exit(3)


@server.tool()
async def slow(seconds: float = 600.0) -> str:
    """Sleep; a cancelled call leaves MARKER_DIR/slow.cancelled behind."""
    (MARKERS / "slow.started").write_text(str(os.getpid()))
    try:
        await asyncio.sleep(seconds)
    except BaseException:
        (MARKERS / "slow.cancelled").write_text("cancelled")
        raise
    return "slept"


@server.tool()
def malformed(ctx: Context) -> str:
    """Answer this request with `content` that is not a list (written straight to the protocol's stdout; the SDK's
    own answer that follows has an id the client no longer waits for)."""
    raw = {"jsonrpc": "2.0", "id": int(ctx.request_id), "result": {"content": "not a list", "isError": 7}}
    os.write(WIRE, (json.dumps(raw) + "\n").encode())
    return "this answer comes too late"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `grown` and tell the client its tool list changed."""

    def grown() -> str:
        """A tool added at run time."""
        return "grown"

    server.add_tool(grown)
    await ctx.session.send_tool_list_changed()
    return "added grown"


@server.tool()
def whoami(ctx: Context) -> str:
    """The request's Authorization header (HTTP only)."""
    return (ctx.headers or {}).get("authorization", "(none)")


if __name__ == "__main__":
    if "--http" in sys.argv:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        server.run()
