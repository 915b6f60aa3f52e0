"""LSP-style `Content-Length` framing: a resynchronising frame parser and the daemon's one stdout writer.

Stdlib only: the boot path uses it before the server is loaded. Framing problems are values (`FrameError`), never
exceptions, so a garbled frame costs one error reply and the stream goes on at the next `Content-Length` line.
"""

from __future__ import annotations

import os
import re
import select
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_FRAME = 64 * 1024 * 1024  # bytes in one body
MAX_HEADER = 64 * 1024  # bytes of a header block before it is garbage
FLUSH_AT = (
    64 * 1024
)  # buffered output bytes that are written at once, without waiting for the loop iteration's end

_HEADER_END = re.compile(rb"\r?\n\r?\n")
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,20})[ \t]*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class FrameError:
    """A frame that could not be read. `code` is the wire's `data.code`: parse_error or frame_too_large."""

    code: str
    message: str


class FrameParser:
    """Feed it bytes; it returns complete bodies (bytes) and FrameErrors in stream order."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._need: int | None = None

    @property
    def buffered(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> list[bytes | FrameError]:
        buf = self._buf
        buf += data
        out: list[bytes | FrameError] = []
        while True:
            if self._need is None:
                m = _HEADER_END.search(buf)
                if m is None:
                    if (
                        len(buf) > MAX_HEADER
                    ):  # garbage (or an oversized body): drop it, keep a possible "\r\n\r"
                        del buf[:-3]
                    return out
                header = bytes(buf[: m.start()])
                del buf[: m.end()]
                if not header.strip():
                    continue  # stray blank lines between frames
                length = None
                for line in header.splitlines():
                    found = _LENGTH.search(line)
                    if found is not None:
                        length = int(found.group(1))
                if length is None:
                    out.append(
                        FrameError("parse_error", "parse error: missing or invalid Content-Length header")
                    )
                    continue
                if length > MAX_FRAME:  # resynchronise at the next header rather than swallow `length` bytes
                    out.append(
                        FrameError("frame_too_large", f"frame of {length} bytes is over the 64 MiB limit")
                    )
                    continue
                self._need = length
            need = self._need
            if len(buf) < need:
                return out
            out.append(bytes(buf[:need]))
            del buf[:need]
            self._need = None


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class FrameWriter:
    """Whole frames to the real stdout, in call order. Bound to an event loop, writes made in one loop iteration
    are coalesced into one `write(2)` (and written at once past FLUSH_AT bytes, so a burst streams to the client
    while it is produced, in bounded memory); unbound (during boot) each frame is written at once. Writes block."""

    def __init__(self, fd: int, on_broken: Callable[[], Any] | None = None) -> None:
        self._fd = fd
        self._chunks: list[bytes] = []
        self._size = 0
        self._loop: Any = None
        self._scheduled = False
        self.broken = False
        self.on_broken = on_broken
        self.frames_written = 0

    def bind(self, loop: Any) -> None:
        self._loop = loop

    def send_body(self, body: bytes) -> None:
        self._chunks.append(b"Content-Length: %d\r\n\r\n" % len(body))
        self._chunks.append(body)
        self._size += len(body) + 24
        self.frames_written += 1
        self._kick()

    def _kick(self) -> None:
        if self._loop is None or self._size >= FLUSH_AT:
            self.flush()
        elif not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        self._scheduled = False
        if not self._chunks:
            return
        data = b"".join(self._chunks)
        self._chunks.clear()
        self._size = 0
        if self.broken:
            return
        view = memoryview(data)
        try:
            while view:
                try:
                    n = os.write(self._fd, view)
                except BlockingIOError:
                    select.select([], [self._fd], [])
                    continue
                view = view[n:]
        except OSError:  # the editor closed our stdout: nobody is listening any more
            self.broken = True
            if self.on_broken is not None:
                self.on_broken()

    def close(self) -> None:
        self.flush()
        try:
            os.close(self._fd)
        except OSError:
            pass
