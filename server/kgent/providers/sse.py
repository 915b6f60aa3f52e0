"""Server-sent events, parsed strictly and incrementally from the raw bytes of a streamed response.

httpx-sse's decoder follows the HTML spec and silently drops lines that are not SSE fields; for a model stream
that would be silent truncation, so here such a line is an error. Data stays bytes: `json.loads` takes them as
they are.
"""

from __future__ import annotations

from kgent.core.errors import ProviderError

SSEEvent = tuple[str, bytes]  # (event name, data): one dispatched event


class SSEParser:
    """Feed it chunks; it returns the events they completed. `close()` flushes what the stream ended with."""

    __slots__ = ("_buffer", "_event", "_data")

    def __init__(self) -> None:
        self._buffer = b""
        self._event = ""
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if self._buffer:
            chunk = self._buffer + chunk
        lines = chunk.split(b"\n")
        self._buffer = lines.pop()
        events: list[SSEEvent] = []
        for line in lines:
            self._line(line, events)
        return events

    def close(self) -> list[SSEEvent]:
        """The events a stream left pending when it ended without a final blank line (checked by the caller)."""
        events: list[SSEEvent] = []
        if self._buffer:
            self._line(self._buffer, events)
            self._buffer = b""
        self._line(b"", events)
        return events

    def _line(self, line: bytes, events: list[SSEEvent]) -> None:
        if line[-1:] == b"\r":
            line = line[:-1]
        if line[:6] == b"data: ":
            self._data.append(line[6:])
            return
        if not line:
            if self._data:
                data = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
                events.append((self._event, data))
            elif self._event:
                events.append((self._event, b""))
            self._event, self._data = "", []
            return
        if line[:1] == b":":  # a comment (keep-alive)
            return
        name, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"error":  # llama.cpp's server reports a failure as an `error:` field
            self._event = "error"
            self._data.append(value)
        elif name not in (b"id", b"retry"):
            raise ProviderError(
                f"malformed server-sent event line: {line[:120].decode('utf-8', 'replace')!r}",
                code="stream_error",
            )
