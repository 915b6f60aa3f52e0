"""The Anthropic Messages wire (`…/messages`) for the model server: a scripted turn as an SSE stream of content
blocks, and the error formats."""

from __future__ import annotations

from typing import Any

from kgent.providers.scripted import text_chunks
from kgent.testing.cache import CacheUsage
from kgent.testing.wire import Rendered, Turn, Vendor, arg_pieces, sse


def render(
    turn: Turn, model: str, n_messages: int, input_tokens: int, cache: CacheUsage | None = None
) -> Rendered:
    """A Messages stream for one turn (its input usage from `cache` unless the script says otherwise)."""
    scripted = next((s["usage"] for s in turn if "usage" in s), None)
    usage = scripted or {"input": input_tokens}
    prompt = (
        cache.anthropic_fields()
        if cache is not None and scripted is None
        else {"input_tokens": usage.get("input", 0)}
    )
    start: dict[str, Any] = {
        "id": f"msg_{n_messages}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**prompt, "output_tokens": 1},
    }
    out: Rendered = [
        sse({"type": "message_start", "message": start}, "message_start"),
        sse({"type": "ping"}, "ping"),
    ]
    index, tools, output = 0, 0, 0

    def block(content: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        out.append(
            sse(
                {"type": "content_block_start", "index": index, "content_block": content},
                "content_block_start",
            )
        )
        out.extend(
            sse({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta")
            for d in deltas
        )
        out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1

    for step in turn:
        if "sleep" in step:
            out.append(float(step["sleep"]))
        if "thinking" in step:
            deltas = [
                {"type": "thinking_delta", "thinking": p}
                for p in text_chunks(step["thinking"], step.get("chunks"))
            ]
            deltas.append({"type": "signature_delta", "signature": f"sig-{n_messages}-{index}"})
            block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
        if "text" in step:
            block(
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": p} for p in text_chunks(step["text"], step.get("chunks"))],
            )
            output += len(step["text"]) // 4
        if "tool" in step:
            call_id = step.get("id") or f"toolu_{tools + 1}_{n_messages}"
            block(
                {"type": "tool_use", "id": call_id, "name": step["tool"], "input": {}},
                [{"type": "input_json_delta", "partial_json": p} for p in arg_pieces(step)],
            )
            tools += 1
        if "error" in step:
            out.append(error_event({"type": step.get("type", "api_error"), "message": step["error"]}))
            return out
    delta = {"stop_reason": "tool_use" if tools else "end_turn", "stop_sequence": None}
    end_usage = {"output_tokens": usage.get("output", max(1, output))}
    out.append(sse({"type": "message_delta", "delta": delta, "usage": end_usage}, "message_delta"))
    out.append(sse({"type": "message_stop"}, "message_stop"))
    return out


def error_body(message: str, error_type: str, code: str | None) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def error_event(error: dict[str, str]) -> bytes:
    return sse({"type": "error", "error": error}, "error")


ANTHROPIC = Vendor(
    render=render,
    error_body=error_body,
    error_event=error_event,
    context_too_long=("prompt is too long: 210000 tokens > 200000 maximum", "invalid_request_error", None),
)
