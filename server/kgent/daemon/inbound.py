"""Incoming bytes → the JSON-RPC core: each frame is checked, what is not a well-formed message (framing errors,
invalid requests) is answered here, and the rest goes to kgent.daemon.rpc. Also how stdin is read (a pipe on the
event loop).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kgent.daemon.boot import read_chunk
from kgent.daemon.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    RpcError,
)
from kgent.daemon.framing import FrameError, FrameParser

if TYPE_CHECKING:
    from kgent.daemon.rpc import Connection

log = logging.getLogger("kgent.daemon")


class Dispatcher:
    """Checks each incoming frame and hands it to the JSON-RPC core; answers what is not a well-formed message."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.stopped = False

    def error(self, msg_id: Any, code: int, message: str, name: str | None = None) -> None:
        self.conn.reply_error(msg_id, RpcError(code, message, {"code": name} if name is not None else None))

    def feed(self, items: list[bytes | FrameError]) -> None:
        for item in items:
            if self.stopped:
                return
            try:
                self.one(item)
            except Exception:  # a bug in here must not take the connection down
                log.exception("dispatching a message failed")

    def one(self, item: bytes | FrameError) -> None:
        if isinstance(item, FrameError):
            code = INVALID_REQUEST if item.code == "frame_too_large" else PARSE_ERROR
            return self.error(None, code, item.message, item.code)
        try:
            msg = json.loads(item)
        except ValueError:  # includes UnicodeDecodeError
            return self.error(None, PARSE_ERROR, "parse error: the body is not valid JSON", "parse_error")
        if not isinstance(msg, dict):
            return self.error(
                None,
                INVALID_REQUEST,
                "invalid request: expected one JSON-RPC 2.0 object (no batches)",
                "invalid_request",
            )
        has_id, msg_id = "id" in msg, msg.get("id")
        id_ok = isinstance(msg_id, int | str) and not isinstance(msg_id, bool)
        reply_id = msg_id if id_ok else None
        method = msg.get("method")
        if msg.get("jsonrpc") != "2.0":
            return self.error(
                reply_id, INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"', "invalid_request"
            )
        if method is None and id_ok and ("result" in msg or "error" in msg):
            return self.response(msg_id, msg)
        if not isinstance(method, str):
            return self.error(
                reply_id, INVALID_REQUEST, 'invalid request: "method" must be a string', "invalid_request"
            )
        if has_id and not id_ok:
            return self.error(
                None,
                INVALID_REQUEST,
                'invalid request: "id" must be an integer or a string',
                "invalid_request",
            )
        params = msg.get("params")
        if not has_id:
            if method == "$/cancelRequest":
                target = params.get("id") if isinstance(params, dict) else None
                if isinstance(target, int | str) and not isinstance(target, bool):
                    self.conn.cancel(target)
                return None
            if (
                method != "exit"
            ):  # a request sent without an id (or an unknown notification): ignored, never run
                log.debug(
                    "ignoring notification %r: only exit and $/cancelRequest are notifications", method[:80]
                )
                return None
            self.stopped = True  # takes effect before the next frame is read
            self.conn.on_exit()
            return None
        assert isinstance(msg_id, int | str)  # id_ok
        if self.conn.in_flight(msg_id):  # never displaces the one in flight (a run would never stream)
            shown = str(msg_id)[:80]
            return self.error(
                msg_id,
                INVALID_REQUEST,
                f"invalid request: id {shown!r} is in use by a request in flight",
                "invalid_request",
            )
        if params is not None and not isinstance(params, dict):
            return self.error(
                msg_id,
                INVALID_PARAMS,
                "invalid params: params must be an object (named parameters)",
                "invalid_params",
            )
        self.conn.request(msg_id, method, params)
        return None

    def response(self, msg_id: Any, msg: dict[str, Any]) -> None:
        error = msg.get("error")
        if error is None:
            self.conn.answer(msg_id, msg.get("result"))
            return
        if (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and isinstance(error.get("message"), str)
        ):
            err = RpcError(error["code"], error["message"], error.get("data"))
        else:
            err = RpcError(INTERNAL_ERROR, "malformed error response")
        self.conn.answer(msg_id, error=err)


class PipeReader(asyncio.Protocol):
    def __init__(self, parser: FrameParser, dispatcher: Dispatcher, on_eof: Callable[[], None]) -> None:
        self.parser, self.dispatcher, self.on_eof = parser, dispatcher, on_eof

    def data_received(self, data: bytes) -> None:
        self.dispatcher.feed(self.parser.feed(data))

    def eof_received(self) -> bool:
        self.on_eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.on_eof()


async def connect(in_fd: int, reader: PipeReader) -> Any:
    """Read stdin on the event loop (a pipe or socket); a thread for anything else (a regular file, Windows)."""
    loop = asyncio.get_running_loop()
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: reader, os.fdopen(in_fd, "rb", buffering=0, closefd=False)
        )
        return transport
    except (ValueError, OSError, NotImplementedError):
        pass

    def pump() -> None:
        while True:
            data = read_chunk(in_fd)
            if not data:
                loop.call_soon_threadsafe(reader.on_eof)
                return
            loop.call_soon_threadsafe(reader.data_received, data)

    threading.Thread(target=pump, name="kgent-stdin", daemon=True).start()
    return None
