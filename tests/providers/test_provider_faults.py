"""Every failure the issue lists, injected by the real local model server, for both wire formats."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from helpers import PATIENCE, eventually
from kgent.core.messages import message_to_dict
from kgent.providers.base import CONTEXT_OVERFLOW, StreamRetry, TextDelta
from kgent.providers.http import RetryPolicy
from kgent.testing import Fault, ModelServer

from .helpers import KEY, TEXT, collect, request


def retries(events: list) -> list[StreamRetry]:
    return [e for e in events if isinstance(e, StreamRetry)]


def assert_no_key(events: list, message) -> None:
    assert KEY not in repr(events) and KEY not in str(message_to_dict(message))


# -- not retried: the user must act --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("status", "code", "hint"),
    [
        (401, "authentication_failed", "to a valid key"),
        (403, "forbidden", "may use this model"),
        (404, "not_found", "--base-url or KGENT_BASE_URL"),
        (400, "invalid_request", "rejected the request"),
    ],
)
async def test_client_errors_are_not_retried_and_say_what_to_fix(
    model_server, make_provider, wire, status, code, hint
):
    # the server echoes the key back in its error text, as some real APIs do: it must be redacted
    model_server.fail(Fault.http_status(status, message=f"bad request with key {KEY}", times=5))
    provider = make_provider(wire)
    events, message = await collect(provider.stream(request()))
    assert message.stop_reason == "error" and message.error_code == code
    assert not retries(events) and len(model_server.requests) == 1
    assert hint in message.error and provider.url in message.error and f"HTTP {status}" in message.error
    assert_no_key(events, message)


@pytest.mark.parametrize(
    ("wire_", "env"),
    [
        ("openai", "KGENT_API_KEY"),  # a vendor's key variable is used only for its vendor's host
        ("anthropic", "KGENT_API_KEY"),
    ],
)
async def test_401_names_the_env_vars_and_sent_no_key_when_none_is_set(
    model_server, make_provider, wire_, env
):
    model_server.fail(Fault.http_status(401))
    provider = make_provider(wire_, api_key=None)
    _, message = await collect(provider.stream(request()))
    assert f"no API key is set; set {env} to a valid key" in message.error
    sent = model_server.requests[0].headers
    assert "authorization" not in sent and "x-api-key" not in sent


async def test_context_too_long_is_context_overflow(model_server, make_provider, wire):
    model_server.fail(Fault.context_too_long())
    events, message = await collect(make_provider(wire).stream(request()))
    assert message.stop_reason == "error" and message.error_code == CONTEXT_OVERFLOW
    assert "context window" in message.error and not retries(events)


# -- retried before output -----------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [429, 500, 502, 503, 529])
async def test_transient_statuses_are_retried_then_succeed(model_server, make_provider, wire, status):
    model_server.fail(Fault.http_status(status, times=2))
    events, message = await collect(make_provider(wire).stream(request()))
    assert message.stop_reason == "end" and message.text == TEXT
    got = retries(events)
    assert [(r.attempt, r.max_attempts) for r in got] == [(1, 3), (2, 3)]
    assert all(f"HTTP {status}" in r.error for r in got)
    assert len(model_server.requests) == 3
    assert events.index(got[-1]) < min(i for i, e in enumerate(events) if isinstance(e, TextDelta))


async def test_retries_give_up_after_max_attempts(model_server, make_provider, wire):
    model_server.fail(Fault.http_status(503, times=10))
    events, message = await collect(make_provider(wire, max_attempts=4).stream(request()))
    assert message.stop_reason == "error" and message.error_code in ("provider_unavailable", "overloaded")
    assert "gave up after 4 attempts" in message.error
    assert len(retries(events)) == 3 and len(model_server.requests) == 4


async def test_max_attempts_one_means_no_retry(model_server, make_provider, wire):
    model_server.fail(Fault.http_status(429))
    events, message = await collect(make_provider(wire, max_attempts=1).stream(request()))
    assert message.error_code == "rate_limited" and not retries(events)


async def test_retry_after_is_honoured_and_capped(model_server, make_provider, wire):
    model_server.fail(Fault.http_status(429, retry_after="0.12"), Fault.http_status(429, retry_after="30"))
    started = time.monotonic()
    events, message = await collect(make_provider(wire).stream(request()))
    assert message.text == TEXT
    assert [r.delay_seconds for r in retries(events)] == [
        0.12,
        0.25,
    ]  # the second is capped (max_retry_after)
    assert time.monotonic() - started >= 0.37


async def test_429_without_retry_after_uses_backoff(model_server, make_provider, wire):
    model_server.fail(Fault.http_status(429, times=2))
    policy = RetryPolicy(base_delay=0.02, jitter=0.0)
    events, _ = await collect(make_provider(wire, retry=policy).stream(request()))
    assert [r.delay_seconds for r in retries(events)] == [0.02, 0.04]


@pytest.mark.parametrize("fault", [Fault.drop, Fault.reset], ids=["dropped-before-headers", "reset"])
async def test_connection_dropped_or_reset_before_headers_is_retried(
    model_server, make_provider, wire, fault
):
    model_server.fail(fault())
    events, message = await collect(make_provider(wire).stream(request()))
    assert message.text == TEXT and len(retries(events)) == 1
    assert retries(events)[0].error.startswith("The connection to")


async def test_connection_refused_is_retried_then_fails(make_provider, wire):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}" + ("/v1" if wire == "openai" else "")
    events, message = await collect(make_provider(wire, base_url=base).stream(request()))
    assert message.error_code == "connection_error" and "Could not connect to" in message.error
    assert len(retries(events)) == 2 and "gave up after 3 attempts" in message.error


async def test_read_timeout_before_first_byte_is_retried(model_server, make_provider, wire):
    # The timeout must also cover the retried request's first byte on a loaded machine: not too short.
    model_server.fail(Fault.stall(60.0))
    events, message = await collect(make_provider(wire, read_timeout=1.5).stream(request()))
    assert message.text == TEXT
    assert [r.error for r in retries(events)] == [
        f"The model server at {model_server.base_url(wire)}"
        f"{'/chat/completions' if wire == 'openai' else '/v1/messages'}"
        " sent no response within 1.5 s (first-byte timeout)"  # local: the first-byte limit is the read timeout
    ]


async def test_overloaded_error_event_before_output_is_retried(model_server, make_provider, wire):
    model_server.fail(Fault.stream_error("overloaded_error", "Overloaded", after_events=1))
    events, message = await collect(make_provider(wire).stream(request()))
    assert message.text == TEXT and len(retries(events)) == 1 and "Overloaded" in retries(events)[0].error


# -- after output began: never retried, never silently truncated ---------------------------------------------
async def test_stream_cut_after_output_fails_keeping_the_partial_text(model_server, make_provider, wire):
    events_before_text = 1 if wire == "openai" else 3  # role chunk | message_start, ping, block start
    model_server.fail(Fault.cut(after_events=events_before_text + 2))
    events, message = await collect(make_provider(wire).stream(request()))
    assert message.stop_reason == "error" and message.error_code == "stream_error"
    assert "broke after output began" in message.error
    assert message.text == "Hello from " and not retries(events) and len(model_server.requests) == 1


async def test_stream_cut_before_output_is_retried(model_server, make_provider, wire):
    model_server.fail(Fault.cut(after_events=1))
    events, message = await collect(make_provider(wire).stream(request()))
    assert message.text == TEXT and len(retries(events)) == 1


async def test_malformed_sse_fails_without_retry(model_server, make_provider, wire):
    model_server.fail(Fault.malformed(after_events=4))
    events, message = await collect(make_provider(wire).stream(request()))
    assert message.stop_reason == "error" and message.error_code == "stream_error"
    assert "malformed server-sent event line: 'this line is not a server-sent event'" in message.error
    assert not retries(events)


async def test_invalid_json_in_a_data_line_fails(model_server, make_provider, wire):
    model_server.fail(Fault.bad_json(after_events=4))
    events, message = await collect(make_provider(wire).stream(request()))
    assert message.error_code == "stream_error" and "invalid JSON in the stream" in message.error
    assert message.text and message.text != TEXT  # what was shown stays, marked as failed


async def test_missing_end_marker_is_an_error_not_a_truncated_success(model_server, make_provider, wire):
    model_server.fail(Fault.no_done())
    events, message = await collect(make_provider(wire).stream(request()))
    marker = "[DONE]" if wire == "openai" else "message_stop"
    assert message.stop_reason == "error" and f"ended before {marker}" in message.error
    assert message.text == TEXT and not retries(events)


async def test_error_event_after_output_fails(model_server, make_provider, wire):
    model_server.fail(Fault.stream_error("api_error", "Internal failure", after_events=6))
    events, message = await collect(make_provider(wire).stream(request()))
    assert message.stop_reason == "error" and "Internal failure" in message.error and not retries(events)


async def test_bad_tool_argument_json_completes_the_turn_with_arguments_error(
    model_server, make_provider, wire
):
    model_server.script = [[{"tool": "read", "raw_args": '{"path": "sample.py"'}, {"tool": "ls", "args": {}}]]
    events, message = await collect(make_provider(wire).stream(request()))
    assert message.stop_reason == "tool_use"
    bad, good = message.tool_calls
    assert bad.name == "read" and bad.arguments == {} and "not valid JSON" in bad.arguments_error
    assert good.name == "ls" and good.arguments_error is None


# -- cancellation --------------------------------------------------------------------------------------------
async def test_cancel_closes_the_stream_at_once(model_server, make_provider, wire):
    model_server.script = [[{"text": "first words "}, {"sleep": 30}, {"text": "never sent"}]]
    provider = make_provider(wire)
    got_text = asyncio.Event()

    async def consume() -> None:
        async for event in provider.stream(request()):
            if isinstance(event, TextDelta):
                got_text.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_text.wait(), PATIENCE)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 10  # at once: not after the server's 30 s sleep
    await eventually(lambda: model_server.disconnects, "the server to see the connection close")
    assert model_server.disconnects == 1


async def test_cancel_during_retry_wait(model_server, make_provider, wire):
    model_server.fail(Fault.http_status(429, retry_after="30"))
    provider = make_provider(wire, retry=RetryPolicy(max_retry_after=30))
    seen: list = []
    first = asyncio.Event()

    async def consume() -> None:
        async for event in provider.stream(request()):
            seen.append(event)
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), PATIENCE)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)  # not the 30 s the retry would wait
    assert isinstance(seen[0], StreamRetry) and seen[0].delay_seconds == 30


async def test_keep_alive_reuses_one_connection(model_server: ModelServer, make_provider, wire):
    provider = make_provider(wire)
    for _ in range(5):
        _, message = await collect(provider.stream(request()))
        assert message.text == TEXT
    assert model_server.connections == 1 and len(model_server.requests) == 5


# -- a dead server fails fast, with its retries shown ---------------------------------------------------------
async def test_a_server_that_never_answers_fails_on_the_first_byte_timeout(model_server, make_provider, wire):
    """It accepts the connection and sends no headers: each attempt ends after the first-byte timeout, not after the
    (long) read timeout, and every retry is announced."""
    model_server.fail(Fault.stall(60.0, times=3))
    provider = make_provider(wire, first_byte_timeout=0.3, read_timeout=30.0)
    events, message = await collect(provider.stream(request()))
    assert message.error_code == "provider_timeout" and "first-byte timeout" in message.error
    assert len(retries(events)) == 2 and "gave up after 3 attempts" in message.error
    assert all("sent no response within 0.3 s" in r.error for r in retries(events))


def test_the_default_timeouts_bound_a_dead_server_to_about_30_seconds() -> None:
    """Worst case over the default 3 attempts: every attempt hangs to its limit, plus the two backoff delays."""
    from kgent.providers.base import ProviderConfig

    remote = ProviderConfig(provider="openai", base_url="https://api.deepseek.com")
    policy = RetryPolicy()
    backoff = sum(policy.base_delay * 2**i * (1 + policy.jitter) for i in range(remote.max_attempts - 1))
    worst = remote.max_attempts * max(remote.connect_timeout, remote.time_to_first_byte()) + backoff
    assert worst <= 30
    local = ProviderConfig(provider="openai", base_url="http://127.0.0.1:11434/v1")
    assert local.time_to_first_byte() == local.read_timeout  # a local server may be loading its model


def test_timeouts_come_from_the_environment() -> None:
    from kgent.config import provider_config
    from kgent.core.errors import ConfigError

    config = provider_config({"KGENT_CONNECT_TIMEOUT": "2", "KGENT_FIRST_BYTE_TIMEOUT": "3.5"}, provider="openai")
    assert (config.connect_timeout, config.time_to_first_byte(), config.read_timeout) == (2.0, 3.5, 120.0)
    with pytest.raises(ConfigError, match="KGENT_READ_TIMEOUT"):
        provider_config({"KGENT_READ_TIMEOUT": "soon"})
