"""The Chat Completions wire (`…/chat/completions`) for the model server: a scripted turn as an SSE stream, and the
error formats."""

from __future__ import annotations

from typing import Any

from kgent.providers.scripted import text_chunks
from kgent.testing.cache import CacheUsage
from kgent.testing.wire import Rendered, Turn, Vendor, arg_pieces, sse


def render(
    turn: Turn, model: str, n_messages: int, input_tokens: int, cache: CacheUsage | None = None
) -> Rendered:
    """A Chat Completions stream for one turn (its prompt usage from `cache` unless the script says otherwise)."""
    head = {"id": f"chatcmpl-{n_messages}", "object": "chat.completion.chunk", "created": 0, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    out: Rendered = [chunk({"role": "assistant", "content": ""})]
    tools, output, usage = 0, 0, None
    for step in turn:
        if "sleep" in step:
            out.append(float(step["sleep"]))
        if "thinking" in step:
            out.extend(
                chunk({"reasoning_content": p}) for p in text_chunks(step["thinking"], step.get("chunks"))
            )
        if "text" in step:
            out.extend(chunk({"content": p}) for p in text_chunks(step["text"], step.get("chunks")))
            output += len(step["text"]) // 4
        if "tool" in step:
            call_id = step.get("id") or f"call_{tools + 1}_{n_messages}"
            first = {
                "index": tools,
                "id": call_id,
                "type": "function",
                "function": {"name": step["tool"], "arguments": ""},
            }
            out.append(chunk({"tool_calls": [first]}))
            out.extend(
                chunk({"tool_calls": [{"index": tools, "function": {"arguments": p}}]})
                for p in arg_pieces(step)
            )
            tools += 1
        if "usage" in step:
            usage = step["usage"]
        if "error" in step:
            out.append(error_event({"message": step["error"], "type": step.get("type", "server_error")}))
            return out
    out.append(chunk({}, "tool_calls" if tools else "stop"))
    u = usage or {"input": input_tokens, "output": max(1, output)}
    prompt = (
        cache.openai_fields() if cache is not None and usage is None else {"prompt_tokens": u.get("input", 0)}
    )
    counts = {
        **prompt,
        "completion_tokens": u.get("output", 0),
        "total_tokens": u.get("input", 0) + u.get("output", 0),
    }
    out.append(sse({**head, "choices": [], "usage": counts}))
    out.append(b"data: [DONE]\n\n")
    return out


def error_body(message: str, error_type: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "code": code}}


def error_event(error: dict[str, str]) -> bytes:
    return sse({"error": error})


OPENAI = Vendor(
    render=render,
    error_body=error_body,
    error_event=error_event,
    context_too_long=(
        "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens. "
        "Please reduce the length of the messages.",
        "invalid_request_error",
        "context_length_exceeded",
    ),
)
