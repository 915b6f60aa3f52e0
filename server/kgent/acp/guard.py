"""Screens the client's lines before the SDK reads them: the SDK (0.12) skips a line that is not JSON without an
answer and stops on JSON that is not an object. Here such a line is answered with a JSON-RPC error (`id: null`)
and dropped; every other line goes to the SDK untouched but `session/delete`, which the SDK does not route: it goes
on as the extension request `_kgent/session/delete` (KgentAgent.ext_method answers it, under the same id)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger("kgent.acp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def screen(line: bytes) -> dict[str, Any] | None:
    """None if the SDK may read `line`; else the error response to write instead."""
    if not line.strip():
        return None
    try:
        message = json.loads(line)
    except ValueError:  # not UTF-8, or not JSON
        return _error(PARSE_ERROR, "Parse error: a message must be one line of JSON")
    if not isinstance(message, dict):
        return _error(
            INVALID_REQUEST, "Invalid Request: a message must be a JSON object (batches are not supported)"
        )
    return None


def _error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


async def pump(
    source: asyncio.StreamReader,
    sink: asyncio.StreamReader,
    out: asyncio.StreamWriter,
    intercept: Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]] | None = None,
) -> None:
    """Copy `source` to `sink` line by line until EOF, answering on `out` for the lines `screen` refuses, and for
    the requests `intercept` answers (`initialize`, `authenticate` and `session/new`, before the SDK has loaded)."""
    try:
        while True:
            try:
                line = await source.readline()
            except ValueError:  # a line over the reader's limit: the reader dropped it
                _reply(out, _error(INVALID_REQUEST, "Invalid Request: the message is too long"))
                continue
            if not line:
                break
            refusal = screen(line)
            reply = await _intercepted(line, intercept) if refusal is None else None
            if reply is not None:
                _reply(out, reply)
            elif refusal is None:
                sink.feed_data(_routed(line))
            else:
                log.warning("refused a line from the client: %s", refusal["error"]["message"])
                _reply(out, refusal)
    finally:
        sink.feed_eof()


INTERCEPTED = (b'"initialize"', b'"authenticate"', b'"session/new"')


async def _intercepted(
    line: bytes, intercept: Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]] | None
) -> dict[str, Any] | None:
    if intercept is None or not any(method in line for method in INTERCEPTED):
        return None  # parse again only what may be one of them
    message = json.loads(line)
    return await intercept(message) if isinstance(message, dict) else None


DELETE = "session/delete"
DELETE_EXTENSION = "kgent/session/delete"  # the SDK strips the leading "_" when it calls ext_method


def _routed(line: bytes) -> bytes:
    """`line`, with a `session/delete` request renamed to the extension method the SDK routes to ext_method."""
    if DELETE.encode() not in line:
        return line
    message = json.loads(line)
    if not isinstance(message, dict) or message.get("method") != DELETE:
        return line
    return json.dumps({**message, "method": "_" + DELETE_EXTENSION}, separators=(",", ":")).encode() + b"\n"


def _reply(out: asyncio.StreamWriter, message: dict[str, Any]) -> None:
    out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
