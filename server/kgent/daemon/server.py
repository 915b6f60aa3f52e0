"""The daemon: a handler table mapping each method of protocol.md to a thin async handler over the shared service.

Bytes come in through kgent.daemon.inbound (resynchronising framing; each message checked) and reach the JSON-RPC
core (kgent.daemon.rpc: dispatch, request tasks, answers, `$/cancelRequest`); every frame goes out through the one
FrameWriter. Errors become JSON-RPC errors in kgent.daemon.errors only.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from kgent.daemon.errors import INVALID_REQUEST, ServiceError, to_jsonrpc
from kgent.daemon.framing import FrameError, FrameParser, FrameWriter
from kgent.daemon.inbound import Dispatcher, PipeReader, connect
from kgent.daemon.port import DaemonPort
from kgent.daemon.rpc import Connection
from kgent.service import wire as W
from kgent.service.handshake import SERVER_VERSION, Settings
from kgent.service.service import Service
from kgent.service.wire.methods import METHODS, Method

_IN = "client → daemon"

log = logging.getLogger("kgent.daemon")


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
    conn = cast(DaemonPort, svc.port).conn
    msg_id = conn.request_id()
    assert msg_id is not None
    conn.after_response[msg_id] = handle.start
    return W.RunResult(run_id=handle.run_id, session_id=handle.session_id)


# The handler table: every client → daemon request of the method table (protocol.md § Method index).
_OWN: dict[str, Handler] = {"agent/run": _run}
REQUESTS: dict[str, Handler] = {
    m.name: _OWN.get(m.name) or _served(m) for m in METHODS if m.direction == _IN and m.kind == "request"
}
NOTIFICATIONS = tuple(
    m.name for m in METHODS if m.direction in (_IN, "both") and m.kind == "notification"
)  # `exit` and `$/cancelRequest`: kgent.daemon.inbound and kgent.daemon.rpc
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
) -> tuple[Connection, Service]:
    """The connection (its handler table) and the service behind it; frames go out once `conn.frames` is bound."""
    handlers: dict[str, Callable[[Any], Awaitable[Any]]] = {}
    conn = Connection(handlers, on_exit)
    svc = Service(env, settings, DaemonPort(conn))
    for method, handler in REQUESTS.items():
        handlers[method] = _wrap(svc, method, handler)
    return conn, svc


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
    conn, svc = build_server(env, settings, stop.set)
    writer.bind(loop)
    writer.on_broken = stop.set
    conn.frames = writer
    dispatcher = Dispatcher(conn)
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
    serving = [task for task in conn.serving.values() if not task.done()]
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
