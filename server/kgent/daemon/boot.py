"""Process entry of `kgent serve --stdio`: guard stdio, answer `initialize` while the server and the kernel load.

The server loads pydantic and the wire models (kgent.service.wire) and the service's stack: ~0.2 s, more than the
handshake's budget. So a thread imports the server while this module (stdlib only) reads the first frame; if it is
`initialize`, it is answered from the static handshake tables at once. Everything after it waits for the import and
is served by kgent.daemon.server.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from kgent.core import codecache, loading
from kgent.core.keyenv import hide_keys
from kgent.daemon.framing import FrameError, FrameParser, FrameWriter
from kgent.ext.config import configured
from kgent.sandbox.bwrap import prefetch
from kgent.service.handshake import ParamsError, Settings, initialize_result, parse_initialize


class _Loader(threading.Thread):
    def __init__(self) -> None:
        super().__init__(name="kgent-load", daemon=True)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            # no collection while it loads; what it built is frozen (kgent.core.loading)
            with loading.loading():
                import kgent.daemon.server  # noqa: F401
        except BaseException as exc:  # re-raised on the main thread, with its traceback, to stderr
            self.error = exc


def guard_stdio() -> tuple[int, int]:
    """Keep private copies of fd 0 and 1 for the protocol; point fd 0 at /dev/null and fd 1 at stderr, so tool
    subprocesses and stray prints can neither steal input nor write into the frame stream."""
    in_fd, out_fd = os.dup(0), os.dup(1)  # dup'd fds are not inherited by children
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return in_fd, out_fd


def read_chunk(in_fd: int) -> bytes:
    """Up to 64 KiB from stdin (blocking); b"" at EOF or when the fd fails (both end the connection)."""
    try:
        return os.read(in_fd, 1 << 16)
    except OSError:
        return b""


def read_first(in_fd: int, parser: FrameParser) -> tuple[list[bytes | FrameError], bool]:
    """Block until the first complete frame (or a framing error, or EOF) is in; (items, eof)."""
    while True:
        data = read_chunk(in_fd)
        if not data:
            return [], True
        items = parser.feed(data)
        if items:
            return items, False


def answer_initialize(
    body: bytes, settings: Settings, env: Mapping[str, str], writer: FrameWriter
) -> Settings | None:
    """Answer `body` if it is a well-formed `initialize` request; None leaves it to the full server."""
    try:
        msg = json.loads(body)
    except ValueError:
        return None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or msg.get("method") != "initialize":
        return None
    if configured(Path.cwd(), env):  # extensions to load and list: the full server answers, once it has them
        return None
    msg_id = msg.get("id")
    if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
        return None
    try:
        version, new_settings = parse_initialize(msg.get("params"), settings)
    except ParamsError:
        return None
    reply = {"jsonrpc": "2.0", "id": msg_id, "result": initialize_result(version, new_settings, env)}
    writer.send_body(json.dumps(reply, separators=(",", ":")).encode())
    return new_settings


def main(
    env: Mapping[str, str] | None = None, *, log_file: str | None = None, log_level: str | None = None
) -> int:
    """Serve one editor over stdin/stdout until `exit`, EOF or SIGTERM. Does not return normally: the process
    exits (status 0) once every run is cancelled and the sessions are flushed."""
    if env is None:  # a daemon process of its own: the keys out of its environ block (kgent.providers.keys)
        hide_keys()
    env = dict(os.environ if env is None else env)
    in_fd, out_fd = guard_stdio()
    loader = _Loader()
    switch = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)  # let this thread answer promptly while the loader holds the GIL
    loader.start()
    prefetch(
        env
    )  # the sandbox probe (a bwrap process) runs while the server loads, not in the first agent/run
    parser, writer = FrameParser(), FrameWriter(out_fd)
    items, eof = read_first(in_fd, parser)
    settings = Settings()
    if items and isinstance(items[0], bytes):
        answered = answer_initialize(items[0], settings, env, writer)
        if answered is not None:
            settings, items = answered, items[1:]
    loader.join()
    sys.setswitchinterval(switch)
    if loader.error is not None:
        raise loader.error
    # what the loader compiled is kept now (the daemon ends with os._exit, which skips atexit), and the cache let go of
    codecache.release()
    from kgent.daemon.server import serve

    return serve(
        env=env,
        in_fd=in_fd,
        writer=writer,
        parser=parser,
        pending=items,
        eof=eof,
        settings=settings,
        log_file=log_file,
        log_level=log_level,
    )
