"""The daemon on pygls: a JsonRPCServer whose handler table maps each method to a thin async handler.

Bytes come in through kgent.daemon.inbound (resynchronising framing; what pygls cannot answer is answered there)
and reach pygls as dict-params messages, so pygls' namedtuple and missing-params pitfalls never apply. pygls owns
dispatch, request futures and `$/cancelRequest`; every frame goes out through the one FrameWriter. Errors become
JSON-RPC errors in kgent.daemon.errors only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from pygls.protocol import JsonRPCProtocol, default_converter
from pygls.server import JsonRPCServer

from kgent.daemon.errors import INVALID_REQUEST, ServiceError, to_jsonrpc
from kgent.daemon.framing import FrameError, FrameParser, FrameWriter
from kgent.daemon.inbound import Dispatcher, PipeReader, connect
from kgent.daemon.port import DaemonPort
from kgent.service import wire as W
from kgent.service.handshake import SERVER_VERSION, Settings
from kgent.service.service import Service

log = logging.getLogger("kgent.daemon")

_encode = json.JSONEncoder(separators=(",", ":"), default=str).encode


class KgentProtocol(JsonRPCProtocol):
    """pygls' JSON-RPC protocol with one writer (compact JSON, `Content-Length` only) and a hook that fires once a
    given response has been written (so a run's events start only after its `agent/run` reply)."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.frames: FrameWriter | None = None
        self.after_response: dict[Any, Callable[[], None]] = {}

    def _send_data(self, data: Any) -> None:
        if not data or self.frames is None:
            return
        body = json.dumps(data, default=self._serialize_message, separators=(",", ":"))
        self.frames.send_body(body.encode())

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        super()._send_response(msg_id, result, error)
        hook = self.after_response.pop(msg_id, None)
        if hook is not None and error is None:
            hook()

    def send_message(self, message: dict[str, Any]) -> None:
        assert self.frames is not None
        self.frames.send_body(_encode(message).encode())


Handler = Callable[[Service, Any], Awaitable[W.Payload | None]]


async def _initialize(svc: Service, params: Any) -> W.InitializeResult:
    return W.InitializeResult.model_validate(svc.initialize(params))


async def _shutdown(svc: Service, params: Any) -> None:
    await svc.shutdown()


async def _run(svc: Service, params: Any) -> W.RunResult:
    handle = await svc.start_run(W.RunParams.parse(params))
    proto = cast(DaemonPort, svc.port).proto
    proto.after_response[proto.msg_id] = handle.start
    return W.RunResult(run_id=handle.run_id, session_id=handle.session_id)


async def _cancel(svc: Service, params: Any) -> W.CancelResult:
    return W.CancelResult(cancelled=svc.cancel(W.RunIdParams.parse(params).run_id))


async def _steer(svc: Service, params: Any) -> W.EmptyResult:
    p = W.RunTextParams.parse(params)
    svc.queue(p.run_id, p.text, steer=True)
    return W.EmptyResult()


async def _follow_up(svc: Service, params: Any) -> W.EmptyResult:
    p = W.RunTextParams.parse(params)
    svc.queue(p.run_id, p.text, steer=False)
    return W.EmptyResult()


async def _clear_queue(svc: Service, params: Any) -> W.EmptyResult:
    svc.clear_queue(W.RunIdParams.parse(params).run_id)
    return W.EmptyResult()


async def _sessions(svc: Service, params: Any) -> W.SessionsResult:
    return await svc.sessions(W.SessionsParams.parse(params).workspace)


async def _session(svc: Service, params: Any) -> W.SessionResult:
    p = W.SessionParams.parse(params)
    return await svc.session(p.session_id, bool(p.branch_only))


async def _fork(svc: Service, params: Any) -> W.ForkResult:
    p = W.ForkParams.parse(params)
    return await svc.fork(p.session_id, p.entry_id)


async def _compact(svc: Service, params: Any) -> W.CompactResult:
    return await svc.compact(W.CompactParams.parse(params))


async def _review(svc: Service, params: Any) -> W.ReviewResult:
    return await svc.review(W.ReviewParams.parse(params))


async def _apply_review(svc: Service, params: Any) -> W.ApplyReviewResult:
    return await svc.apply_review(W.ApplyReviewParams.parse(params))


# The handler table: every request the daemon serves (protocol.md § Method index).
REQUESTS: dict[str, Handler] = {
    "initialize": _initialize,
    "shutdown": _shutdown,
    "agent/run": _run,
    "agent/cancel": _cancel,
    "agent/steer": _steer,
    "agent/followUp": _follow_up,
    "agent/clearQueue": _clear_queue,
    "agent/sessions": _sessions,
    "agent/session": _session,
    "agent/fork": _fork,
    "agent/compact": _compact,
    "agent/review": _review,
    "agent/applyReview": _apply_review,
}
NOTIFICATIONS = ("exit", "$/cancelRequest")  # `$/cancelRequest` is pygls' built-in
SENT = (
    "agent/event",
    "agent/permission",
    "agent/readTextFile",
    "agent/writeTextFile",
    "agent/saveFiles",
    "$/cancelRequest",
)  # daemon → client


def _wrap(svc: Service, method: str, handler: Handler) -> Callable[[Any], Awaitable[Any]]:
    async def serve_request(params: Any) -> Any:
        if svc.shut_down:
            raise to_jsonrpc(
                ServiceError(INVALID_REQUEST, "the daemon is shutting down: send exit", "shutting_down")
            )
        try:
            result = await handler(svc, params)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise to_jsonrpc(exc) from None
        return None if result is None else result.wire()

    serve_request.__name__ = serve_request.__qualname__ = f"handle_{method.replace('/', '_')}"
    return serve_request


def build_server(
    env: Mapping[str, str], settings: Settings, on_exit: Callable[[], None]
) -> tuple[JsonRPCServer, Service]:
    server = JsonRPCServer(KgentProtocol, default_converter)
    proto: KgentProtocol = server.protocol  # type: ignore[assignment]
    svc = Service(env, settings, DaemonPort(proto))
    for method, handler in REQUESTS.items():
        server.feature(method)(_wrap(svc, method, handler))

    @server.feature("exit")
    def handle_exit(params: Any) -> None:  # sync: takes effect before the next frame is read
        on_exit()

    return server, svc


def configure_logging(env: Mapping[str, str], log_file: str | None, log_level: str | None) -> None:
    level_name = (log_level or env.get("KGENT_LOG_LEVEL") or "WARNING").upper()
    level = getattr(logging, level_name, logging.WARNING)
    target = log_file or env.get("KGENT_LOG_FILE")
    handler: logging.Handler = logging.StreamHandler(sys.stderr)
    if target:
        try:
            handler = logging.FileHandler(target)
        except OSError as exc:
            sys.stderr.write(f"kgent: cannot log to {target} ({exc.strerror}); logging to stderr\n")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # pygls logs every error reply (ours are on purpose) and late answers at WARNING/ERROR: keep them for debugging.
    logging.getLogger("pygls").setLevel(logging.DEBUG if level <= logging.DEBUG else logging.CRITICAL)


async def _main(
    *,
    env: Mapping[str, str],
    in_fd: int,
    writer: FrameWriter,
    parser: FrameParser,
    pending: list[bytes | FrameError],
    eof: bool,
    settings: Settings,
) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    server, svc = build_server(env, settings, stop.set)
    proto: KgentProtocol = server.protocol  # type: ignore[assignment]
    writer.bind(loop)
    writer.on_broken = stop.set
    proto.frames = writer
    proto.set_writer(writer)
    dispatcher = Dispatcher(proto)
    for sig in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            try:
                loop.add_signal_handler(sig, stop.set)
            except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
                pass
    log.info("kgent %s serving on stdio (pid %d)", SERVER_VERSION, os.getpid())
    dispatcher.feed(pending)
    transport = None
    if eof:
        stop.set()
    else:
        transport = await connect(in_fd, PipeReader(parser, dispatcher, stop.set))
        loop.run_in_executor(None, svc.warm_up)
    await stop.wait()
    dispatcher.stopped = True
    if transport is not None:
        transport.close()
    svc.shut_down = True  # from here on, requests are refused
    await svc.cancel_all(grace=2.0)
    # Let requests already being served finish (briefly), so a client that closed stdin still gets its answers;
    # then cancel whatever they started, close the providers and flush the sessions.
    serving: list[asyncio.Task[Any]] = []
    for future in proto._request_futures.values():
        if isinstance(future, asyncio.Task) and not future.done():
            serving.append(future)
    if serving:
        await asyncio.wait(serving, timeout=0.5)
    await svc.close(grace=1.0)
    writer.flush()
    log.info("kgent daemon stopped")
    return 0


def serve(
    *,
    env: Mapping[str, str],
    in_fd: int,
    writer: FrameWriter,
    parser: FrameParser,
    pending: list[bytes | FrameError],
    eof: bool,
    settings: Settings,
    log_file: str | None = None,
    log_level: str | None = None,
) -> int:
    configure_logging(env, log_file, log_level)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        code = loop.run_until_complete(
            _main(
                env=env,
                in_fd=in_fd,
                writer=writer,
                parser=parser,
                pending=pending,
                eof=eof,
                settings=settings,
            )
        )
    except BaseException:
        log.exception("the daemon failed")
        code = 1
    writer.flush()
    logging.shutdown()
    sys.stderr.flush()
    # Exit now: a worker thread stuck in a blocking call (a tool's file read) must not hold the process. The
    # session store flushed above, and every append was already fsync'd.
    os._exit(code)
