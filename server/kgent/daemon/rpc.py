"""The daemon's JSON-RPC core: the client's requests served as tasks and answered, the client's answers to the
daemon's own requests, and `$/cancelRequest` both ways (protocol.md § Cancellation, § Errors).

Our own rather than pygls' (docs/adr/0006): pygls' JSON-RPC module imports lsprotocol's ~550 LSP classes, half of the
daemon's load and of a cold daemon's first run, for a job of this size; and the daemon needed four of its private
members anyway. Framing is kgent.daemon.framing and the checks on each incoming message kgent.daemon.inbound: what
reaches this module is a well-formed request, notification or answer.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from kgent.daemon.errors import INTERNAL_ERROR, METHOD_NOT_FOUND, REQUEST_CANCELLED, RpcError

MsgId = int | str
Handler = Callable[[Any], Awaitable[Any]]

log = logging.getLogger("kgent.daemon")

_encode = json.JSONEncoder(separators=(",", ":"), default=str).encode
_serving: contextvars.ContextVar[MsgId | None] = contextvars.ContextVar("kgent_request_id", default=None)


class Frames(Protocol):
    def send_body(self, body: bytes) -> None: ...


class Connection:
    """One client's JSON-RPC state: its requests in flight (each a task running its handler), the daemon's requests
    waiting for the client's answer (each a plain future), and what to do once a given reply is written."""

    def __init__(self, handlers: dict[str, Handler], on_exit: Callable[[], None]) -> None:
        self.handlers = handlers
        self.on_exit = on_exit
        # the one writer of every outgoing frame, bound when the connection is up
        self.frames: Frames | None = None
        self.serving: dict[MsgId, asyncio.Task[Any]] = {}
        self.waiting: dict[MsgId, asyncio.Future[Any]] = {}
        # request id → called right after its successful reply is written (a run's events follow its agent/run reply)
        self.after_response: dict[MsgId, Callable[[], None]] = {}

    @staticmethod
    def request_id() -> MsgId | None:
        """The id of the client request whose handler is running (None outside one)."""
        return _serving.get()

    def send_message(self, message: dict[str, Any]) -> None:
        assert self.frames is not None
        self.frames.send_body(_encode(message).encode())

    def in_flight(self, msg_id: MsgId) -> bool:
        return msg_id in self.serving or msg_id in self.waiting

    # ---- the client's requests
    def request(self, msg_id: MsgId, method: str, params: Any) -> None:
        """Serve one request: its handler runs as a task, and its reply is written when the task ends."""
        if method == "exit":
            # `exit` sent with an id: it still ends the daemon, before the next frame is read
            self.on_exit()
            self.send_message({"jsonrpc": "2.0", "id": msg_id, "result": None})
            return
        handler = self.handlers.get(method)
        if handler is None:
            self.reply_error(msg_id, RpcError(METHOD_NOT_FOUND, f"method not found: {method[:80]}"))
            return
        token = _serving.set(msg_id)
        try:
            task = asyncio.ensure_future(handler(params))  # the task keeps the context it was created in
        finally:
            _serving.reset(token)
        self.serving[msg_id] = task
        task.add_done_callback(functools.partial(self._reply, msg_id))

    def _reply(self, msg_id: MsgId, task: asyncio.Task[Any]) -> None:
        if self.serving.get(msg_id) is task:
            del self.serving[msg_id]
        hook = self.after_response.pop(msg_id, None)
        if task.cancelled():
            self.reply_error(msg_id, RpcError(REQUEST_CANCELLED, "request cancelled ($/cancelRequest)"))
            return
        exc = task.exception()
        if exc is not None:
            if not isinstance(exc, RpcError):  # the handlers map every error (kgent.daemon.errors): a bug
                log.error("request %r failed", msg_id, exc_info=exc)
                exc = RpcError(INTERNAL_ERROR, "internal error", {"code": "internal_error"})
            self.reply_error(msg_id, exc)
            return
        self.send_message({"jsonrpc": "2.0", "id": msg_id, "result": task.result()})
        if hook is not None:
            hook()

    def reply_error(self, msg_id: MsgId | None, error: RpcError) -> None:
        self.send_message({"jsonrpc": "2.0", "id": msg_id, "error": error.error()})

    # ---- the daemon's requests
    async def ask(self, msg_id: MsgId, method: str | None = None, params: Any = None) -> Any:
        """Send a request (with `method`) and wait for the client's answer to `msg_id`; without `method`, wait for the
        next answer to an id already asked (a refused answer keeps its prompt open). An error answer raises RpcError.
        Cancelled: withdrawn with `$/cancelRequest`, and a late answer is dropped."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[msg_id] = future
        if method is not None:
            self.send_message({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        try:
            return await future
        except asyncio.CancelledError:
            if self.waiting.get(msg_id) is future:
                del self.waiting[msg_id]
            self.send_message({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}})
            raise

    def answer(self, msg_id: MsgId, result: Any = None, error: RpcError | None = None) -> None:
        """The client's answer to one of our requests; an answer to none (withdrawn, or never asked) is dropped."""
        future = self.waiting.pop(msg_id, None)
        if future is None or future.done():
            log.debug("dropping an answer to no open request: %r", msg_id)
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    # ---- `$/cancelRequest`
    def cancel(self, target: MsgId) -> None:
        """The client's `$/cancelRequest`: for one of its requests, the handler is cancelled (answered -32800); for
        one of our prompts, it counts as the answer `{"outcome": "cancelled"}`."""
        future = self.waiting.pop(target, None)
        if future is not None:
            if not future.done():
                future.set_result({"outcome": "cancelled"})
            return
        task = self.serving.get(target)
        if task is not None:
            task.cancel()
