"""FrameParser: frames split anywhere, garbage and wrong lengths resynchronise; FrameWriter: whole frames, in order."""

from __future__ import annotations

import asyncio
import os

from kgent.daemon.framing import MAX_FRAME, FrameError, FrameParser, FrameWriter, frame


def feed_all(parser: FrameParser, data: bytes, step: int | None = None) -> list[bytes | FrameError]:
    if step is None:
        return parser.feed(data)
    out: list[bytes | FrameError] = []
    for i in range(0, len(data), step):
        out += parser.feed(data[i : i + step])
    return out


def test_frames_split_at_every_byte() -> None:
    stream = frame(b'{"a":1}') + frame(b"[]") + frame(b'"\xc3\xa9"')
    for step in (None, 1, 2, 7):
        assert feed_all(FrameParser(), stream, step) == [b'{"a":1}', b"[]", b'"\xc3\xa9"']


def test_header_variants() -> None:
    stream = (
        b"content-length:3\r\nContent-Type: x\r\n\r\nabc" + b"Content-Length: 2\n\nxy" + b"\r\n" + frame(b"z")
    )
    assert FrameParser().feed(stream) == [b"abc", b"xy", b"z"]


def test_missing_length_is_reported_and_the_next_frame_found() -> None:
    out = FrameParser().feed(b"Content-Type: x\r\n\r\n{}" + frame(b"ok"))
    assert out == [FrameError("parse_error", "parse error: missing or invalid Content-Length header"), b"ok"]


def test_short_length_leaves_garbage_that_resynchronises() -> None:
    body = b'{"jsonrpc":"2.0"}'
    out = FrameParser().feed(b"Content-Length: 5\r\n\r\n" + body + frame(b"next"))
    assert out == [body[:5], b"next"]


def test_too_large_is_refused_without_swallowing() -> None:
    out = FrameParser().feed(b"Content-Length: %d\r\n\r\n" % (MAX_FRAME + 1) + frame(b"next"))
    assert isinstance(out[0], FrameError) and out[0].code == "frame_too_large"
    assert out[1:] == [b"next"]


def test_endless_garbage_is_dropped_quietly_in_bounded_memory() -> None:
    parser = FrameParser()
    assert parser.feed(b"x" * 200_000) == []
    assert parser.buffered < 70_000
    assert parser.feed(b"\r\n\r\n" + frame(b"ok"))[-1] == b"ok"


def test_writer_coalesces_and_keeps_order() -> None:
    r, w = os.pipe()
    writer = FrameWriter(w)
    writer.send_body(b"boot")  # unbound: written at once
    assert os.read(r, 100) == frame(b"boot")

    async def burst() -> None:
        writer.bind(asyncio.get_running_loop())
        for i in range(100):
            writer.send_body(b"%d" % i)
        await asyncio.sleep(0)

    asyncio.run(burst())
    writer.close()
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    assert FrameParser().feed(data) == [b"%d" % i for i in range(100)]
    assert writer.frames_written == 101


def test_writer_survives_a_closed_reader() -> None:
    r, w = os.pipe()
    os.close(r)
    broken = []
    writer = FrameWriter(w, on_broken=lambda: broken.append(True))
    writer.send_body(b"nobody listens")
    assert writer.broken and broken == [True]
    writer.send_body(b"still fine")
    writer.close()
