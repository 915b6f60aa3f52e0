"""Anthropic Messages: the request we send and the stream we decode (httpx.MockTransport)."""

from __future__ import annotations

import json

import httpx
import pytest

from kgent.core.messages import (
    AssistantMessage,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from kgent.providers import create_provider
from kgent.providers.anthropic import AnthropicProvider
from kgent.providers.base import ProviderConfig, TextDelta, ThinkingDelta, ToolCallStart, ToolSchema

from .helpers import FAST, KEY, collect, request, sse_response

READ = ToolSchema(name="read", description="Read a file", parameters={"type": "object"})


def ev(kind: str, **data) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


START = ev(
    "message_start",
    message={
        "id": "msg_1",
        "role": "assistant",
        "content": [],
        "usage": {
            "input_tokens": 50,
            "cache_read_input_tokens": 20,
            "cache_creation_input_tokens": 5,
            "output_tokens": 1,
        },
    },
)
STOP = ev("message_stop")


def end(stop_reason: str = "end_turn", output: int = 9) -> list[bytes]:
    return [ev("message_delta", delta={"stop_reason": stop_reason}, usage={"output_tokens": output}), STOP]


def text_block(index: int, *pieces: str) -> list[bytes]:
    return [
        ev("content_block_start", index=index, content_block={"type": "text", "text": ""}),
        *(ev("content_block_delta", index=index, delta={"type": "text_delta", "text": p}) for p in pieces),
        ev("content_block_stop", index=index),
    ]


def provider_for(events: list[bytes], seen: list[httpx.Request] | None = None, **config) -> AnthropicProvider:
    def handler(req: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(req)
        return sse_response(events)

    config.setdefault("api_key", KEY)
    config.setdefault("model", "claude-test")
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return AnthropicProvider(ProviderConfig(provider="anthropic", **config), client=client, retry=FAST)


async def test_registry_builds_it_with_defaults():
    provider = create_provider(ProviderConfig(provider="claude"))
    assert isinstance(provider, AnthropicProvider) and provider.url == "https://api.anthropic.com/v1/messages"
    await provider.aclose()


@pytest.mark.parametrize("base", ["http://h", "http://h/", "http://h/v1"])
def test_url_accepts_base_with_or_without_v1(base):
    assert provider_for([], base_url=base).url == "http://h/v1/messages"


async def test_request_wire_format():
    seen: list[httpx.Request] = []
    provider = provider_for([START, *text_block(0, "ok"), *end()], seen, base_url="http://h")
    thinking = [
        {"type": "thinking", "thinking": "Plan.", "signature": "sig-abc"},
        {"type": "redacted_thinking", "data": "opaque"},
    ]
    history = (
        SummaryMessage(text="Before."),
        UserMessage(text="fix it"),
        AssistantMessage(
            text="Reading both.",
            thinking="Plan.",
            vendor={"thinking_blocks": thinking},
            tool_calls=(
                ToolCall(id="t1", name="read", arguments={"path": "a"}),
                ToolCall(id="t2", name="bash", arguments={"command": "rm"}),
            ),
            stop_reason="tool_use",
        ),
        ToolResultMessage(tool_call_id="t1", name="read", content="A"),
        ToolResultMessage(tool_call_id="t2", name="bash", content="permission_denied: no", is_error=True),
        UserMessage(text="steer: be careful"),
    )
    await collect(provider.stream(request(messages=history, tools=(READ,))))
    (req,) = seen
    assert str(req.url) == "http://h/v1/messages"
    assert req.headers["x-api-key"] == KEY and req.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in req.headers
    body = json.loads(req.content)
    assert body["model"] == "claude-test" and body["max_tokens"] == 8192 and body["stream"] is True
    cache = {"type": "ephemeral"}  # breakpoints: the tools, the system prompt, the previous and the newest user message
    assert body["system"] == [{"type": "text", "text": "You are a test.", "cache_control": cache}]
    assert body["tools"] == [
        {"name": "read", "description": "Read a file", "input_schema": {"type": "object"}, "cache_control": cache}
    ]
    summary = "The conversation history before this point was compacted into the following summary:\n\n<summary>\nBefore.\n</summary>"
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": summary},
                {"type": "text", "text": "fix it", "cache_control": cache},
            ],
        },
        {
            "role": "assistant",
            "content": [
                *thinking,
                {"type": "text", "text": "Reading both."},
                {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a"}},
                {"type": "tool_use", "id": "t2", "name": "bash", "input": {"command": "rm"}},
            ],
        },
        {
            "role": "user",
            "content": [  # consecutive tool results: one user message, then the steering text
                {"type": "tool_result", "tool_use_id": "t1", "content": "A"},
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": "permission_denied: no",
                    "is_error": True,
                },
                {"type": "text", "text": "steer: be careful", "cache_control": cache},
            ],
        },
    ]


async def test_incremental_encoding_closes_and_reopens_groups_correctly():
    seen: list[httpx.Request] = []
    provider = provider_for([START, *text_block(0, "ok"), *end()], seen)
    history: list = [UserMessage(text="go")]
    await collect(provider.stream(request(messages=tuple(history))))
    history += [
        AssistantMessage(text="a", tool_calls=(ToolCall(id="t1", name="ls"),)),
        ToolResultMessage(tool_call_id="t1", name="ls", content="r1"),
    ]
    await collect(provider.stream(request(messages=tuple(history))))
    history += [UserMessage(text="more")]  # merges into the open tool-result group
    await collect(provider.stream(request(messages=tuple(history))))
    history += [AssistantMessage(text="b")]
    await collect(provider.stream(request(messages=tuple(history))))
    last = json.loads(seen[-1].content)["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant"]
    assert [b["type"] for b in last[2]["content"]] == ["tool_result", "text"]
    fresh: list[httpx.Request] = []
    await collect(
        provider_for([START, *text_block(0, "ok"), *end()], fresh).stream(request(messages=tuple(history)))
    )
    assert json.loads(fresh[0].content) == json.loads(seen[-1].content)


async def test_thinking_text_tools_and_usage_are_decoded():
    provider = provider_for(
        [
            START,
            ev("ping"),
            ev(
                "content_block_start",
                index=0,
                content_block={"type": "thinking", "thinking": "", "signature": ""},
            ),
            ev("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "Let me "}),
            ev("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "see."}),
            ev("content_block_delta", index=0, delta={"type": "signature_delta", "signature": "EqQB"}),
            ev("content_block_stop", index=0),
            ev("content_block_start", index=1, content_block={"type": "redacted_thinking", "data": "xyz"}),
            ev("content_block_stop", index=1),
            *text_block(2, "Reading", " now."),
            ev(
                "content_block_start",
                index=3,
                content_block={"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}},
            ),
            ev("content_block_delta", index=3, delta={"type": "input_json_delta", "partial_json": ""}),
            ev(
                "content_block_delta",
                index=3,
                delta={"type": "input_json_delta", "partial_json": '{"path": "a'},
            ),
            ev("content_block_delta", index=3, delta={"type": "input_json_delta", "partial_json": '.py"}'}),
            ev("content_block_stop", index=3),
            ev(
                "content_block_start",
                index=4,
                content_block={"type": "tool_use", "id": "toolu_2", "name": "ls", "input": {}},
            ),
            ev("content_block_stop", index=4),
            *end("tool_use", 42),
        ]
    )
    events, message = await collect(provider.stream(request()))
    assert events[:-1] == [
        ThinkingDelta("Let me "),
        ThinkingDelta("see."),
        TextDelta("Reading"),
        TextDelta(" now."),
        ToolCallStart(0, "toolu_1", "read"),
        ToolCallStart(1, "toolu_2", "ls"),
    ]
    assert (
        message.stop_reason == "tool_use"
        and message.text == "Reading now."
        and message.thinking == "Let me see."
    )
    assert message.tool_calls == (
        ToolCall(id="toolu_1", name="read", arguments={"path": "a.py"}),
        ToolCall(id="toolu_2", name="ls", arguments={}),
    )
    assert message.vendor == {
        "thinking_blocks": [
            {"type": "thinking", "thinking": "Let me see.", "signature": "EqQB"},
            {"type": "redacted_thinking", "data": "xyz"},
        ]
    }
    assert message.usage == Usage(
        input_tokens=50, output_tokens=42, cache_read_tokens=20, cache_write_tokens=5
    )


@pytest.mark.parametrize(
    ("reason", "stop"),
    [("end_turn", "end"), ("stop_sequence", "end"), ("max_tokens", "max_tokens"), ("tool_use", "end")],
)
async def test_stop_reasons(reason, stop):
    _, message = await collect(provider_for([START, *text_block(0, "x"), *end(reason)]).stream(request()))
    assert message.stop_reason == stop  # tool_use without a tool block: nothing to run, the turn ends


async def test_refusal_is_an_error():
    _, message = await collect(provider_for([START, *text_block(0, "x"), *end("refusal")]).stream(request()))
    assert message.stop_reason == "error" and message.error_code == "content_filter"


async def test_max_tokens_from_config_and_request():
    seen: list[httpx.Request] = []
    provider = provider_for([START, *end()], seen, max_tokens=1000)
    await collect(provider.stream(request()))
    await collect(provider.stream(request(max_tokens=77)))
    assert [json.loads(r.content)["max_tokens"] for r in seen] == [1000, 77]


async def test_delta_for_an_unknown_block_is_a_stream_error():
    bad = ev("content_block_delta", index=7, delta={"type": "text_delta", "text": "?"})
    _, message = await collect(provider_for([START, bad, *end()]).stream(request()))
    assert message.error_code == "stream_error" and "unknown block" in message.error


async def test_prompt_too_long_error_event_is_context_overflow():
    error = ev(
        "error", error={"type": "invalid_request_error", "message": "prompt is too long: 300000 tokens"}
    )
    _, message = await collect(provider_for([START, error]).stream(request()))
    assert message.error_code == "context_overflow"


def test_cache_breakpoints_mark_the_newest_and_the_previous_newest_user_message():
    from kgent.providers.anthropic import cache_breakpoints

    u, a = b'{"role":"user","content":[]}', b'{"role":"assistant","content":[]}'
    assert cache_breakpoints([]) == []
    assert cache_breakpoints([u]) == [0]
    assert cache_breakpoints([u, a]) == [0]  # a history ending in an answer: its user message only
    assert cache_breakpoints([u, a, u]) == [0, 2]
    assert cache_breakpoints([u, a, u, a, u]) == [2, 4]
    assert cache_breakpoints([u, a, u, a]) == [0, 2]
