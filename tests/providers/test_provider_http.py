"""The shared HTTP pieces as pure functions: retry policy, Retry-After, status classification, the SSE parser."""

from __future__ import annotations

import time
from email.utils import formatdate

import httpx
import pytest

from kgent.core.errors import ProviderError
from kgent.providers.http import (
    Endpoint,
    RetryPolicy,
    parse_retry_after,
    server_message,
    status_error,
    transport_error,
)
from kgent.providers.sse import SSEParser

WHERE = Endpoint(
    provider="openai", url="https://api.deepseek.com/chat/completions", model="deepseek-chat", has_key=True
)


def test_backoff_doubles_with_bounded_jitter_and_a_cap():
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=0.2)
    for attempt, nominal in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        delays = {policy.delay(attempt) for _ in range(50)}
        assert all(0.8 * nominal <= d <= 1.2 * nominal for d in delays)
        assert len(delays) > 1  # jittered


def test_retry_after_replaces_backoff_and_is_capped():
    policy = RetryPolicy(max_retry_after=60)
    assert policy.delay(1, 7.0) == 7.0 and policy.delay(3, 0.0) == 0.0 and policy.delay(1, 3600) == 60


def test_parse_retry_after_forms():
    assert parse_retry_after(httpx.Headers({"retry-after": "3"})) == 3.0
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    in_ten = parse_retry_after(httpx.Headers({"retry-after": formatdate(time.time() + 10, usegmt=True)}))
    assert in_ten is not None and 8 <= in_ten <= 10
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx.Headers()) is None


@pytest.mark.parametrize(
    ("status", "body", "code", "retryable"),
    [
        (
            400,
            b'{"error": {"message": "bad field", "type": "invalid_request_error"}}',
            "invalid_request",
            False,
        ),
        (400, b'{"error": {"message": "x", "code": "context_length_exceeded"}}', "context_overflow", False),
        (
            400,
            b'{"error": {"message": "This model\'s maximum context length is 8192 tokens"}}',
            "context_overflow",
            False,
        ),
        (
            413,
            b'{"type": "error", "error": {"type": "request_too_large", "message": "Request exceeds the maximum size"}}',
            "context_overflow",
            False,
        ),
        (402, b'{"error": {"message": "Insufficient Balance"}}', "insufficient_balance", False),
        (
            429,
            b'{"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}',
            "insufficient_balance",
            False,
        ),
        (429, b"slow down", "rate_limited", True),
        (408, b"", "provider_timeout", True),
        (500, b"oops", "provider_unavailable", True),
        (
            529,
            b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}',
            "overloaded",
            True,
        ),
        (418, b"teapot", "invalid_request", False),
    ],
)
def test_status_classification(status, body, code, retryable):
    error = status_error(status, body, httpx.Headers(), WHERE, None)
    assert (error.code, error.retryable, error.status) == (code, retryable, status)
    assert WHERE.url in error.message and "deepseek-chat" in error.message


def test_context_length_exceeded_code_alone_is_recognised():
    # OpenAI's code is in the body even when the message words differ; server_message keeps "type: message"
    body = b'{"error": {"message": "too long", "type": "context_length_exceeded"}}'
    assert status_error(400, body, httpx.Headers(), WHERE, None).code == "context_overflow"


def test_key_is_redacted_from_server_messages():
    key = "sk-live-abcdef123456"
    error = status_error(
        401,
        f'{{"error": {{"message": "Incorrect API key provided: {key}"}}}}'.encode(),
        httpx.Headers(),
        WHERE,
        key,
    )
    assert key not in error.message and "[redacted]" in error.message
    assert "KGENT_API_KEY or DEEPSEEK_API_KEY" in error.message


def test_server_message_shapes():
    assert server_message(b'{"error": "model not found"}') == "model not found"  # Ollama
    assert (
        server_message(b'{"type":"error","error":{"type":"not_found_error","message":"model: x"}}')
        == "not_found_error: model: x"
    )
    assert server_message(b"<html>bad gateway</html>") == "<html>bad gateway</html>"


def test_transport_errors():
    assert transport_error(httpx.ConnectError("refused"), WHERE).retryable
    assert transport_error(httpx.ReadTimeout(""), WHERE).code == "provider_timeout"
    assert transport_error(httpx.RemoteProtocolError("peer closed"), WHERE).retryable
    assert transport_error(httpx.UnsupportedProtocol("ftp"), WHERE).code == "config_error"


def test_sse_parser_handles_split_chunks_crlf_comments_and_multiline_data():
    parser = SSEParser()
    stream = b': keep-alive\r\nevent: delta\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata: [DONE]\n\n'
    events = []
    for i in range(len(stream)):  # byte by byte
        events += parser.feed(stream[i : i + 1])
    assert events == [("delta", b'{"a":\n1}'), ("", b"[DONE]")]
    assert parser.close() == []


def test_sse_parser_flushes_an_unterminated_last_event():
    parser = SSEParser()
    assert parser.feed(b"data: x\n\ndata: tail") == [("", b"x")]
    assert parser.close() == [("", b"tail")]


def test_sse_parser_rejects_a_non_field_line():
    parser = SSEParser()
    with pytest.raises(ProviderError, match="malformed server-sent event line"):
        parser.feed(b'{"choices": []}\n')
    assert SSEParser().feed(b"id: 7\nretry: 100\ndata: ok\n\n") == [("", b"ok")]


LAZY_CLIENT = """
import json, sys, threading
from kgent.providers import create_provider
from kgent.providers.base import ProviderConfig
loaded = {"modules": "httpx" in sys.modules or "httpcore" in sys.modules}
provider = create_provider(ProviderConfig(provider="openai", model="m", base_url="http://127.0.0.1:9/v1", api_key="k"))
loaded["provider"] = "httpx" in sys.modules
clients = []
threads = [threading.Thread(target=lambda: clients.append(provider.http())) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
provider.warm()
clients.append(provider.http())
print(json.dumps({**loaded, "after": "httpx" in sys.modules, "one_client": len({id(c) for c in clients}) == 1,
                  "model": provider.model}))
"""


def test_the_providers_load_without_httpx_and_make_one_client_on_first_use():
    """httpx's stack (~50 ms of a first run) loads with a provider's first client, not with the provider: a run
    starts (and says so) meanwhile. Threads asking at once (the warm-up, the first request) get the same client."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", LAZY_CLIENT], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(done.stdout) == {
        "modules": False,
        "provider": False,
        "after": True,
        "one_client": True,
        "model": "m",
    }
