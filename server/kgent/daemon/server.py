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
from kgent.service.wire.methods import METHODS, Method

_IN = "client → daemon"

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


def _served(m: Method) -> Handler:
    """The table's service call behind the daemon's params check."""
    assert m.call is not None, m.name
    call, model = m.call, m.params

    async def handler(svc: Service, params: Any) -> W.Payload | None:
        if model is None:
            parsed = None
        elif m.name == "initialize":
            parsed = params  # checked on the boot path, without pydantic (kgent.service.handshake)
        else:
            parsed = model.parse(params)
        result: W.Payload | None = await call(svc, parsed)
        return result

    return handler


async def _run(svc: Service, params: Any) -> W.RunResult:
    """`agent/run`'s daemon step: the run's events start once the reply is written."""
    handle = await svc.start_run(W.RunParams.parse(params))
    proto = cast(DaemonPort, svc.port).proto
    proto.after_response[proto.msg_id] = handle.start
    return W.RunResult(run_id=handle.run_id, session_id=handle.session_id)


# The handler table: every client → daemon request of the method table (protocol.md § Method index).
_OWN: dict[str, Handler] = {"agent/run": _run}
REQUESTS: dict[str, Handler] = {
    m.name: _OWN.get(m.name) or _served(m) for m in METHODS if m.direction == _IN and m.kind == "request"
}
NOTIFICATIONS = tuple(
    m.name for m in METHODS if m.direction in (_IN, "both") and m.kind == "notification"
)  # `$/cancelRequest` is pygls' built-in
SENT = tuple(m.name for m in METHODS if m.direction in ("daemon → client", "both"))  # daemon → client


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
