"""LiveOutput: a call's streamed output throttled to one update per interval, newest text winning, none after end."""

from __future__ import annotations

import asyncio

from kgent.acp.live import LiveOutput


async def _until(predicate: object) -> None:
    for _ in range(1000):
        if predicate():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out waiting")


async def test_the_first_text_goes_at_once_then_the_newest_after_the_interval() -> None:
    sent: list[tuple[str, str]] = []

    async def send(call_id: str, text: str) -> None:
        sent.append((call_id, text))

    live = LiveOutput(send, interval=0.05)
    await live.feed("c1", "a")
    await live.feed("c1", "a b")
    await live.feed("c1", "a b c")
    await live.feed("c2", "other")
    assert sent == [("c1", "a"), ("c2", "other")]
    await _until(lambda: len(sent) == 3)
    assert sent[2] == ("c1", "a b c")  # the trailing text, without another feed


async def test_end_drops_the_pending_text() -> None:
    sent: list[str] = []

    async def send(call_id: str, text: str) -> None:
        sent.append(text)

    live = LiveOutput(send, interval=0.05)
    await live.feed("c1", "a")
    await live.feed("c1", "a b")
    flush = live._flush["c1"]  # the delayed send of "a b"
    await live.end("c1")
    await asyncio.wait([flush])
    assert flush.cancelled() and sent == ["a"]
    await live.feed("c1", "fresh")  # a new call with the same id starts unthrottled
    assert sent == ["a", "fresh"]
    live.close()
