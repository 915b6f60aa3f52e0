"""Faults the model server injects on demand: HTTP errors, dropped and reset connections, stalls, cut or malformed
streams. A Fault applies to the next `times` model requests; it shapes the response, the server only sends it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgent.testing.wire import REASONS, Rendered, Vendor

# The error type of an injected status when none is given (the vendors' own spellings, close enough for both).
_ERROR_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


@dataclass(slots=True, kw_only=True)
class Fault:
    """One injected failure, applied to the next `times` model requests (in the order faults were queued)."""

    kind: str
    status: int = 0
    message: str = ""
    error_type: str = ""
    retry_after: str | None = None
    seconds: float = 0.0
    after_events: int = 0
    times: int = 1

    @classmethod
    def http_status(
        cls,
        status: int,
        *,
        retry_after: str | float | None = None,
        message: str = "",
        error_type: str = "",
        times: int = 1,
    ) -> Fault:
        """An HTTP error response in the vendor's JSON error format (optionally with Retry-After)."""
        ra = None if retry_after is None else str(retry_after)
        return cls(
            kind="status", status=status, retry_after=ra, message=message, error_type=error_type, times=times
        )

    @classmethod
    def context_too_long(cls, times: int = 1) -> Fault:
        """The vendor's 400 for a prompt that does not fit the context window."""
        return cls(kind="context", status=400, times=times)

    @classmethod
    def drop(cls, times: int = 1) -> Fault:
        """Close the connection after reading the request, before any response byte."""
        return cls(kind="drop", times=times)

    @classmethod
    def reset(cls, times: int = 1) -> Fault:
        """Reset the connection (RST) after reading the request."""
        return cls(kind="reset", times=times)

    @classmethod
    def stall(cls, seconds: float, times: int = 1) -> Fault:
        """Wait `seconds` before the response headers (a read timeout before the first byte)."""
        return cls(kind="stall", seconds=seconds, times=times)

    @classmethod
    def cut(cls, after_events: int, times: int = 1) -> Fault:
        """Send `after_events` events, then abort the connection mid-body."""
        return cls(kind="cut", after_events=after_events, times=times)

    @classmethod
    def malformed(cls, after_events: int = 0, times: int = 1) -> Fault:
        """Insert a line that is not an SSE field after `after_events` events."""
        return cls(kind="malformed", after_events=after_events, times=times)

    @classmethod
    def bad_json(cls, after_events: int = 0, times: int = 1) -> Fault:
        """Insert an SSE data line that is not valid JSON after `after_events` events."""
        return cls(kind="bad_json", after_events=after_events, times=times)

    @classmethod
    def no_done(cls, times: int = 1) -> Fault:
        """End the body cleanly but without the end marker (`[DONE]` / `message_stop`)."""
        return cls(kind="no_done", times=times)

    @classmethod
    def stream_error(
        cls,
        error_type: str = "overloaded_error",
        message: str = "Overloaded",
        *,
        after_events: int = 0,
        times: int = 1,
    ) -> Fault:
        """An error event inside a 200 stream after `after_events` events, ending the stream."""
        return cls(
            kind="stream_error",
            error_type=error_type,
            message=message,
            after_events=after_events,
            times=times,
        )

    def error_body(self, vendor: Vendor) -> dict[str, Any]:
        """The JSON body of this fault's HTTP error response (a `status` or `context` fault)."""
        if self.kind == "context":
            message, error_type, code = vendor.context_too_long
        else:
            error_type = self.error_type or _ERROR_TYPES.get(self.status, "api_error")
            message, code = self.message or f"{REASONS.get(self.status, 'Error')} (injected)", None
        return vendor.error_body(message, error_type, code)

    def inject(self, vendor: Vendor, items: Rendered) -> Rendered:
        """The rendered stream with this fault applied (kinds that act before the stream leave it as is)."""
        events = [i for i, item in enumerate(items) if isinstance(item, bytes)]
        at = events[self.after_events] if self.after_events < len(events) else len(items)
        if self.kind == "cut":
            return [*items[:at], -1.0]
        if self.kind == "no_done":
            return items[:-1]
        if self.kind == "malformed":
            return [*items[:at], b"this line is not a server-sent event\n\n", *items[at:]]
        if self.kind == "bad_json":
            return [*items[:at], b'data: {"choices": [{"delta": {"content": "unterminated\n\n', *items[at:]]
        if self.kind == "stream_error":
            return [*items[:at], vendor.error_event({"type": self.error_type, "message": self.message})]
        return items
