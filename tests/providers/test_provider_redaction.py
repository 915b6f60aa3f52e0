"""Secrets never on the wire back: every error text — a status error, an error event inside a stream, a transport
failure — is redacted where it is created (keys, Authorization values, URL userinfo, key-shaped strings)."""

from __future__ import annotations

import pytest

from kgent.config import provider_config, require_key
from kgent.core.errors import ConfigError, KgentError, ProviderError
from kgent.core.messages import message_to_dict
from kgent.core.redact import MASK, redact, redact_url, remember_secret
from kgent.testing.model_server import Fault

from .helpers import KEY, collect, request


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("GET https://bob:hunter2-pass@api.example.com/v1 failed", "hunter2-pass"),
        ("headers: {'Authorization': 'Bearer abcdefghijklmnop'}", "abcdefghijklmnop"),
        ('{"x-api-key": "key-1234567890abcd"}', "key-1234567890abcd"),
        ("authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
        ("Incorrect API key provided: sk-proj-AbCdEf0123456789xyz", "sk-proj-AbCdEf0123456789xyz"),
        (
            "token ghp_0123456789abcdefghijABCDEFGHIJ012345 revoked",
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        ),
        ("api_key=plainsecretvalue&x=1", "plainsecretvalue"),
    ],
)
def test_secret_shapes_are_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and MASK in out


def test_remembered_secrets_and_error_messages() -> None:
    remember_secret("opaque-custom-credential-42")
    assert "opaque" not in redact("the server said opaque-custom-credential-42 is wrong")
    assert "opaque" not in KgentError("echo: opaque-custom-credential-42").message
    provider_config({}, provider="openai", api_key="configured-key-7777")  # a config remembers its key
    assert "configured-key-7777" not in ProviderError("bad key configured-key-7777").message
    assert redact("nothing secret in 12 files") == "nothing secret in 12 files"
    assert redact_url("https://u:p@h.example/x") == f"https://{MASK}@h.example/x"


def test_a_base_url_with_credentials_is_not_echoed_by_config_errors() -> None:
    config = provider_config({}, provider="openai", base_url="https://me:url-password-9@proxy.example/v1")
    with pytest.raises(ConfigError) as missing:
        require_key(config)
    assert "url-password-9" not in missing.value.message and "proxy.example" in missing.value.message


def _clean(events: list, message, *secrets: str) -> None:
    text = repr(events) + str(message_to_dict(message))
    for secret in secrets:
        assert secret not in text


async def test_a_key_echoed_inside_a_streamed_error_is_redacted(model_server, make_provider, wire) -> None:
    other = "sk-someone-elses-key-0123456789"
    model_server.fail(
        Fault.stream_error("invalid_request_error", f"key {KEY} (also {other}) is wrong", after_events=1)
    )
    provider = make_provider(wire)
    events, message = await collect(provider.stream(request()))
    assert message.stop_reason == "error" and message.error
    assert "is wrong" in message.error
    _clean(events, message, KEY, other)


async def test_credentials_in_the_base_url_never_reach_an_error(make_provider, wire) -> None:
    provider = make_provider(
        wire, base_url="http://me:url-secret-55@127.0.0.1:9"
    )  # nothing listens on port 9
    events, message = await collect(provider.stream(request()))
    assert message.stop_reason == "error" and "127.0.0.1:9" in (message.error or "")
    _clean(events, message, "url-secret-55", KEY)


def test_any_fragment_of_a_configured_key_from_twelve_characters_is_redacted() -> None:
    key = "sk-proj-Zq8vLm2XwR4tNc7YpB0sKd5HfJ3gUe9A"
    remember_secret(key)
    body = key.removeprefix("sk-")  # a server that echoes the key without its prefix
    assert (
        body not in redact(f"invalid key {body}!")
        and redact(f"invalid key {body}!") == f"invalid key {MASK}!"
    )
    middle = key[10:22]  # exactly FRAGMENT characters from the middle
    assert redact(f"key ...{middle}... rejected") == f"key ...{MASK}... rejected"
    assert redact(f"ends in {key[-11:]}") == f"ends in {key[-11:]}"  # 11 characters: below the bound, kept
    twice = f"{key[:20]} and again {key[15:]}"
    assert redact(twice) == f"{MASK} and again {MASK}"
    assert "Zq8vLm2XwR4t" not in KgentError(f"echo: {key[8:30]}").message
    assert redact("a text with sk-proj- in it") == "a text with sk-proj- in it"


def test_fragments_of_a_key_given_per_call_and_short_keys() -> None:
    assert redact("bad: abcdefghijklmnopq", "XYZabcdefghijklmnopqXYZ") == f"bad: {MASK}"
    remember_secret("short-k1")  # shorter than FRAGMENT: only the whole key is masked
    assert redact("short-k1 short-k") == f"{MASK} short-k"


async def test_a_key_echoed_without_its_prefix_inside_a_streamed_error_is_redacted(
    model_server, make_provider, wire
) -> None:
    echoed = KEY.removeprefix("sk-")
    model_server.fail(Fault.stream_error("invalid_request_error", f"key {echoed} is wrong", after_events=1))
    provider = make_provider(wire)
    events, message = await collect(provider.stream(request()))
    assert message.stop_reason == "error" and message.error and "is wrong" in (message.error or "")
    _clean(events, message, KEY, echoed, echoed[2:14])


def test_tool_output_masks_only_the_configured_keys() -> None:
    """kgent.core.redact.redact_keys (what the kernel applies to every tool result): a remembered key and any
    12-character run of it go; everything else — secret-shaped or not — stays exactly, so a file read back still
    matches its lines."""
    from kgent.core.redact import redact_keys

    key = "zq-tool-output-key-0123456789abcdef"
    remember_secret(key)
    text = f"KEY={key}\npart: {key[3:20]}\npassword = hunter2\nAuthorization: Bearer abcdefghijklmnop\n"
    out = redact_keys(text)
    assert key[3:15] not in out and out.count(MASK) == 2
    assert "password = hunter2\nAuthorization: Bearer abcdefghijklmnop\n" in out
    assert redact_keys("nothing to mask here") == "nothing to mask here"
