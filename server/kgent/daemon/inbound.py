"""Incoming bytes → pygls: each frame is checked and handed to pygls as a dict-params message, and what pygls cannot
answer (framing errors, invalid requests) is answered here. Also how stdin is read (a pipe on the event loop).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol.types import CancelParams, ResponseError, ResponseErrorMessage
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage

from kgent.daemon.boot import read_chunk
from kgent.daemon.errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, error_object
from kgent.daemon.framing import FrameError, FrameParser

if TYPE_CHECKING:
    from kgent.daemon.server import KgentProtocol

log = logging.getLogger("kgent.daemon")


class Dispatcher:
    """Checks each incoming frame and hands it to pygls; answers what pygls cannot (framing, invalid requests)."""

    def __init__(self, proto: KgentProtocol) -> None:
        self.proto = proto
        self.stopped = False

    def error(self, msg_id: Any, code: int, message: str, name: str | None = None) -> None:
        self.proto.send_message({"jsonrpc": "2.0", "id": msg_id, "error": error_object(code, message, name)})

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
                None, INVALID_REQUEST, "invalid request: expected one JSON-RPC 2.0 object (no batches)", "invalid_request"
            )
        has_id, msg_id = "id" in msg, msg.get("id")
        id_ok = isinstance(msg_id, int | str) and not isinstance(msg_id, bool)
        reply_id = msg_id if id_ok else None
        method = msg.get("method")
        if msg.get("jsonrpc") != "2.0":
            return self.error(reply_id, INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"', "invalid_request")
        if method is None and id_ok and ("result" in msg or "error" in msg):
            return self.response(msg_id, msg)
        if not isinstance(method, str):
            return self.error(reply_id, INVALID_REQUEST, 'invalid request: "method" must be a string', "invalid_request")
        if has_id and not id_ok:
            return self.error(
                None, INVALID_REQUEST, 'invalid request: "id" must be an integer or a string', "invalid_request"
            )
        params = msg.get("params")
        if not has_id:
            if method == "$/cancelRequest":
                target = params.get("id") if isinstance(params, dict) else None
                if isinstance(target, int | str) and not isinstance(target, bool):
                    self.cancel(target)
                return None
            if method != "exit":  # a request sent without an id (or an unknown notification): ignored, never run
                log.debug("ignoring notification %r: only exit and $/cancelRequest are notifications", method[:80])
                return None
            self.stopped = True
            self.proto.handle_message(JsonRPCNotification(method=method, jsonrpc="2.0", params=params))
            return None
        if msg_id in self.proto._request_futures:  # pygls would overwrite the in-flight one (a run would never stream)
            shown = str(msg_id)[:80]
            return self.error(
                msg_id, INVALID_REQUEST, f"invalid request: id {shown!r} is in use by a request in flight", "invalid_request"
            )
        if params is not None and not isinstance(params, dict):
            return self.error(
                msg_id, INVALID_PARAMS, "invalid params: params must be an object (named parameters)", "invalid_params"
            )
        assert isinstance(msg_id, int | str)  # id_ok
        self.proto.handle_message(JsonRPCRequestMessage(id=msg_id, method=method, jsonrpc="2.0", params=params))
        return None

    def cancel(self, target: Any) -> None:
        """The client's `$/cancelRequest`: for one of its requests, pygls cancels the handler (-32800); for one of
        our prompts (a plain future, not a handler task), it counts as the answer `{"outcome": "cancelled"}`."""
        future = self.proto._request_futures.get(target)
        if isinstance(future, asyncio.Future) and not isinstance(future, asyncio.Task):
            self.proto._request_futures.pop(target, None)
            if not future.done():
                future.set_result({"outcome": "cancelled"})
            return
        cancel = JsonRPCNotification(method="$/cancelRequest", jsonrpc="2.0", params=CancelParams(id=target))
        self.proto.handle_message(cancel)

    def response(self, msg_id: Any, msg: dict[str, Any]) -> None:
        error = msg.get("error")
        if error is None:
            self.proto.handle_message(JsonRPCResponseMessage(id=msg_id, jsonrpc="2.0", result=msg.get("result")))
            return
        if isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str):
            err = ResponseError(code=error["code"], message=error["message"], data=error.get("data"))
        else:
            err = ResponseError(code=-32603, message="malformed error response")
        # pygls' own reader hands error replies over as this lsprotocol type too (its hint leaves it out).
        self.proto.handle_message(ResponseErrorMessage(id=msg_id, error=err))  # type: ignore[arg-type]


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
        transport, _ = await loop.connect_read_pipe(lambda: reader, os.fdopen(in_fd, "rb", buffering=0, closefd=False))
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
