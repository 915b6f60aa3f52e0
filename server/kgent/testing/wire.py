"""What the model server and both vendors' renderers share: a vendor's wire format as a value, SSE event bytes,
a tool call's argument pieces, and HTTP reason phrases."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgent.testing.cache import CacheUsage

Turn = list[dict[str, Any]]
# A rendered response: SSE events as bytes, a float meaning "sleep this long here" (a negative one: cut the body).
Rendered = list[bytes | float]

REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Vendor:
    """One vendor's wire format as the server speaks it."""

    render: Callable[[Turn, str, int, int, CacheUsage | None], Rendered]
    """(turn, model, number of messages in the request, input tokens, the emulated prompt-cache accounting or None)
    → the response stream."""
    error_body: Callable[[str, str, str | None], dict[str, Any]]
    """(message, error type, code) → the JSON body of an HTTP error response."""
    error_event: Callable[[dict[str, str]], bytes]
    """{"type", "message"} → an error event inside a 200 stream."""
    context_too_long: tuple[str, str, str | None]
    """(message, error type, code) of the vendor's 400 for a prompt past the context window."""


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event; `data` is JSON-encoded unless it is bytes already."""
    payload = data if isinstance(data, bytes) else json.dumps(data, separators=(",", ":")).encode()
    return (b"event: " + event.encode() + b"\n" if event else b"") + b"data: " + payload + b"\n\n"


def arg_pieces(step: dict[str, Any]) -> list[str]:
    """A tool step's argument JSON in three pieces (`raw_args` verbatim, else `args` encoded)."""
    raw = step["raw_args"] if "raw_args" in step else json.dumps(step.get("args") or {})
    third = max(1, len(raw) // 3)
    return [raw[i : i + third] for i in range(0, len(raw), third)] or [""]
