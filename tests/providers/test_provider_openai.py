"""OpenAI-compatible Chat Completions: the request we send and the stream we decode (httpx.MockTransport)."""

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
from kgent.providers.base import ProviderConfig, TextDelta, ThinkingDelta, ToolCallStart, ToolSchema
from kgent.providers.openai import OpenAIProvider

from .helpers import FAST, KEY, collect, request, sse_response

READ = ToolSchema(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)


def chunk(delta: dict | None = None, finish: str | None = None, **extra) -> bytes:
    body = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
        **extra,
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


def provider_for(
    events: list[bytes], seen: list[httpx.Request] | None = None, handler=None, **config
) -> OpenAIProvider:
    def canned(req: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(req)
        return sse_response(events)

    handler = handler or canned
    config.setdefault("api_key", KEY)
    config.setdefault("model", "deepseek-chat")
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return OpenAIProvider(ProviderConfig(provider="openai", **config), client=client, retry=FAST)


async def test_registry_builds_it_with_deepseek_defaults():
    provider = create_provider(ProviderConfig(provider="deepseek"))
    assert isinstance(provider, OpenAIProvider)
    assert provider.url == "https://api.deepseek.com/chat/completions" and provider.model == "deepseek-chat"
    await provider.aclose()


async def test_request_wire_format():
    seen: list[httpx.Request] = []
    provider = provider_for(
        [chunk({"content": "ok"}, "stop"), DONE], seen, base_url="http://h/v1", max_tokens=99
    )
    history = (
        UserMessage(text="fix it"),
        AssistantMessage(
            text="",
            thinking="I should read.",
            vendor={"reasoning_content": "I should read."},
            tool_calls=(ToolCall(id="call_1", name="read", arguments={"path": "a.py"}),),
            stop_reason="tool_use",
        ),
        ToolResultMessage(tool_call_id="call_1", name="read", content="x = 1"),
        ToolResultMessage(tool_call_id="call_2", name="bash", content="permission_denied: no", is_error=True),
        SummaryMessage(text="Earlier we talked."),
    )
    await collect(provider.stream(request(messages=history, tools=(READ,))))
    (req,) = seen
    assert str(req.url) == "http://h/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {KEY}" and req.headers["accept"] == "text/event-stream"
    body = json.loads(req.content)
    assert body["model"] == "deepseek-chat" and body["stream"] is True and body["max_tokens"] == 99
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "read", "description": "Read a file", "parameters": READ.parameters},
        }
    ]
    assert body["messages"] == [
        {"role": "system", "content": "You are a test."},
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "I should read.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "x = 1"},
        {"role": "tool", "tool_call_id": "call_2", "content": "permission_denied: no"},
        {
            "role": "user",
            "content": "The conversation history before this point was compacted into the following "
            "summary:\n\n<summary>\nEarlier we talked.\n</summary>",
        },
    ]
    await provider.aclose()


async def test_growing_history_is_encoded_like_from_scratch():
    """The incremental encoder must produce exactly what a fresh provider produces."""
    seen: list[httpx.Request] = []
    provider = provider_for([chunk({"content": "ok"}, "stop"), DONE], seen)
    history: list = [UserMessage(text="one")]
    for i in range(4):
        await collect(provider.stream(request(messages=tuple(history))))
        history += [
            AssistantMessage(text=f"a{i}", tool_calls=(ToolCall(id=f"c{i}", name="ls"),)),
            ToolResultMessage(tool_call_id=f"c{i}", name="ls", content=f"r{i}"),
        ]
    history[2:] = [UserMessage(text="edited")]  # a different branch of the same conversation
    await collect(provider.stream(request(messages=tuple(history))))
    fresh: list[httpx.Request] = []
    for i, req in enumerate(seen):
        other = provider_for([chunk({"content": "ok"}, "stop"), DONE], fresh)
        await collect(other.stream(request(messages=tuple(m for m in _messages(req)))))
        assert json.loads(fresh[i].content) == json.loads(req.content)
    assert [m["content"] for m in json.loads(seen[-1].content)["messages"]][-1] == "edited"


def _messages(req: httpx.Request):
    """Rebuild kernel messages from a recorded wire request (enough for the encoder comparison)."""
    for m in json.loads(req.content)["messages"][1:]:
        if m["role"] == "user":
            yield UserMessage(text=m["content"])
        elif m["role"] == "tool":
            yield ToolResultMessage(tool_call_id=m["tool_call_id"], name="ls", content=m["content"])
        else:
            calls = tuple(ToolCall(id=c["id"], name=c["function"]["name"]) for c in m.get("tool_calls", ()))
            yield AssistantMessage(text=m["content"] or "", tool_calls=calls)


async def test_text_reasoning_and_usage_are_decoded():
    provider = provider_for(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"reasoning_content": "Think "}),
            chunk({"reasoning_content": "hard."}),
            chunk({"content": "Hi"}),
            chunk({"content": " there"}, "stop"),
            b'data: {"id":"c1","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":7,'
            b'"prompt_cache_hit_tokens":60}}\n\n',
            DONE,
        ]
    )
    events, message = await collect(provider.stream(request()))
    assert events[:-1] == [
        ThinkingDelta("Think "),
        ThinkingDelta("hard."),
        TextDelta("Hi"),
        TextDelta(" there"),
    ]
    assert message.text == "Hi there" and message.thinking == "Think hard." and message.stop_reason == "end"
    assert message.vendor == {"reasoning_content": "Think hard."}
    assert message.usage == Usage(input_tokens=40, output_tokens=7, cache_read_tokens=60)
    assert message.provider == "openai" and message.model == "deepseek-chat"


async def test_parallel_tool_calls_are_assembled_per_index():
    provider = provider_for(
        [
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "read", "arguments": ""},
                        }
                    ]
                }
            ),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "call_b",
                            "type": "function",
                            "function": {"name": "ls", "arguments": '{"pa'},
                        }
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": '}}]}),
            chunk({"tool_calls": [{"index": 1, "function": {"arguments": 'th": "."}'}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"a.py"}'}}]}),
            chunk({}, "tool_calls"),
            DONE,
        ]
    )
    events, message = await collect(provider.stream(request()))
    assert events[:2] == [ToolCallStart(0, "call_a", "read"), ToolCallStart(1, "call_b", "ls")]
    assert message.stop_reason == "tool_use"
    assert message.tool_calls == (
        ToolCall(id="call_a", name="read", arguments={"path": "a.py"}),
        ToolCall(id="call_b", name="ls", arguments={"path": "."}),
    )


async def test_tool_calls_without_index_or_id_still_assemble():
    # some local servers omit the index and the id and send everything in one delta
    provider = provider_for(
        [
            chunk({"tool_calls": [{"function": {"name": "ls", "arguments": "{}"}}]}),
            chunk({}, "stop"),
            DONE,
        ]
    )
    events, message = await collect(provider.stream(request()))
    assert message.tool_calls == (ToolCall(id="call_0", name="ls", arguments={}),)
    assert message.stop_reason == "tool_use"  # calls present, whatever the finish reason said


@pytest.mark.parametrize("raw", ['{"path": ', "[1, 2]"])
async def test_bad_argument_json_becomes_arguments_error(raw):
    provider = provider_for(
        [
            chunk(
                {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "read", "arguments": raw}}]},
                "tool_calls",
            ),
            DONE,
        ]
    )
    _, message = await collect(provider.stream(request()))
    (call,) = message.tool_calls
    assert message.stop_reason == "tool_use" and call.arguments == {} and call.arguments_error


@pytest.mark.parametrize(("finish", "stop"), [("stop", "end"), ("length", "max_tokens"), (None, "end")])
async def test_finish_reasons(finish, stop):
    provider = provider_for([chunk({"content": "x"}, finish), DONE])
    _, message = await collect(provider.stream(request()))
    assert message.stop_reason == stop


async def test_content_filter_is_an_error():
    provider = provider_for([chunk({"content": "x"}, "content_filter"), DONE])
    _, message = await collect(provider.stream(request()))
    assert message.stop_reason == "error" and message.error_code == "content_filter" and message.text == "x"


async def test_a_json_answer_instead_of_a_stream_is_a_clear_error():
    provider = provider_for([], handler=lambda r: httpx.Response(200, json={"choices": []}))
    _, message = await collect(provider.stream(request()))
    assert message.error_code == "stream_error" and "instead of an event stream" in message.error


async def test_connection_refused_then_up_is_retried():
    calls = 0

    def handler(req: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise httpx.ConnectError("[Errno 111] Connection refused")
        return sse_response([chunk({"content": "up"}, "stop"), DONE])

    provider = provider_for([], handler=handler)
    events, message = await collect(provider.stream(request()))
    assert message.text == "up" and events[0].attempt == 1 and "Connection refused" in events[0].error


async def test_llama_cpp_error_field_is_reported():
    provider = provider_for(
        [b'error: {"code": 500, "message": "slot unavailable", "type": "server_error"}\n\n']
    )
    provider.max_attempts = 1
    _, message = await collect(provider.stream(request()))
    assert message.stop_reason == "error" and "slot unavailable" in message.error


async def test_mid_stream_context_overflow_error_object():
    provider = provider_for(
        [
            b'data: {"error": {"message": "maximum context length is 8192 tokens", '
            b'"type": "invalid_request_error"}}\n\n'
        ]
    )
    _, message = await collect(provider.stream(request()))
    assert message.error_code == "context_overflow"


async def test_tool_calls_without_index_continue_by_id():
    provider = provider_for(
        [
            chunk({"tool_calls": [{"id": "a", "function": {"name": "read", "arguments": '{"path":'}}]}),
            chunk({"tool_calls": [{"id": "b", "function": {"name": "ls", "arguments": "{}"}}]}),
            chunk({"tool_calls": [{"id": "a", "function": {"arguments": ' "x"}'}}]}),
            chunk({}, "tool_calls"),
            DONE,
        ]
    )
    _, message = await collect(provider.stream(request()))
    assert message.tool_calls == (
        ToolCall(id="a", name="read", arguments={"path": "x"}),
        ToolCall(id="b", name="ls", arguments={}),
    )


async def test_an_empty_answer_is_sent_back_as_empty_content_not_null():
    seen: list[httpx.Request] = []
    provider = provider_for([chunk({"content": "ok"}, "stop"), DONE], seen)
    history = (UserMessage(text="a"), AssistantMessage(text=""), UserMessage(text="b"))
    await collect(provider.stream(request(messages=history)))
    assert json.loads(seen[0].content)["messages"][2] == {"role": "assistant", "content": ""}


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_a_lone_surrogate_in_tool_arguments_does_not_break_the_next_request(wire):
    # JSON from a model may carry "\ud800"; the next request must still be valid JSON that says the same.
    from kgent.providers.anthropic import AnthropicProvider
    from kgent.providers.wire import parse_arguments

    arguments, problem = parse_arguments('{"path": "x\\ud800y"}')
    assert problem is None
    seen: list[httpx.Request] = []
    if wire == "openai":
        provider = provider_for([chunk({"content": "ok"}, "stop"), DONE], seen)
    else:
        def handler(req: httpx.Request) -> httpx.Response:
            seen.append(req)
            return httpx.Response(500)

        provider = AnthropicProvider(
            ProviderConfig(provider="anthropic", api_key=KEY, max_attempts=1),
            client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        )
    history = (
        UserMessage(text="go"),
        AssistantMessage(tool_calls=(ToolCall(id="c1", name="read", arguments=arguments),), stop_reason="tool_use"),
        ToolResultMessage(tool_call_id="c1", name="read", content="File not found"),
    )
    await collect(provider.stream(request(messages=history)))
    (req,) = seen
    body = json.loads(req.content)
    sent = body["messages"][-2]
    got = json.loads(sent["tool_calls"][0]["function"]["arguments"]) if wire == "openai" else sent["content"][0]["input"]
    assert got == {"path": "x\ud800y"}
    await provider.aclose()


@pytest.mark.parametrize(
    ("base_url", "sent"),
    [
        ("https://api.openai.com/v1", True),
        ("https://api.deepseek.com", False),  # DeepSeek caches by prefix alone
        ("http://127.0.0.1:8000/v1", False),  # vLLM, llama.cpp, Ollama …: a strict server refuses unknown fields
    ],
)
async def test_prompt_cache_key_goes_only_to_hosts_that_take_it(base_url, sent):
    seen: list[httpx.Request] = []
    provider = provider_for([chunk({"content": "ok"}, "stop"), DONE], seen, base_url=base_url)
    await collect(provider.stream(request(cache_key="sess-1")))
    await collect(provider.stream(request()))  # no key (a compaction's summary request has none)
    bodies = [json.loads(r.content) for r in seen]
    assert [b.get("prompt_cache_key") for b in bodies] == (["sess-1", None] if sent else [None, None])


def test_usage_reads_openai_and_deepseek_cache_reports():
    from kgent.providers.openai import usage_from_wire

    openai = {"prompt_tokens": 2006, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 1920}}
    deepseek = {"prompt_tokens": 300, "completion_tokens": 9, "prompt_cache_hit_tokens": 256, "prompt_cache_miss_tokens": 44}
    assert usage_from_wire(openai) == Usage(input_tokens=86, output_tokens=300, cache_read_tokens=1920)
    assert usage_from_wire(deepseek) == Usage(input_tokens=44, output_tokens=9, cache_read_tokens=256)
