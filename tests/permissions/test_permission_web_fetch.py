"""web_fetch's calls as the policy sees them: network, asked unless allowed; a private address (the host resolved)
asked separately, with its own reason, and not covered by an 'allow always' given for public addresses."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgent.permissions import SessionRules, classify, decide
from kgent.tools.addresses import private_address


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://127.0.0.1:8080/x", "127.0.0.1"),
        ("http://localhost/", None),  # a name: resolved (to loopback, whichever family comes first)
        ("https://10.1.2.3/", "10.1.2.3"),
        ("http://192.168.0.7/", "192.168.0.7"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("http://[::1]:8000/", "::1"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"),
        ("http://0.0.0.0/", "0.0.0.0"),
    ],
)
def test_private_targets_are_protected_with_their_own_reason(
    url: str, address: str | None, tmp_path: Path
) -> None:
    intent = classify("web_fetch", {"url": url}, tmp_path)
    assert intent.operation == "network" and intent.protected
    assert "a private network address" in intent.reason and (
        address is None or f"{address})" in intent.reason
    )
    for mode in ("ask", "auto"):
        verdict = decide(mode, intent)
        assert verdict.action == "ask" and verdict.reason.endswith(
            "private network addresses need your approval"
        )
    assert decide("plan", intent).action == "deny"
    assert decide("full", intent).action == "allow"


def test_a_public_target_is_network_asked_unless_allowed(tmp_path: Path) -> None:
    intent = classify("web_fetch", {"url": "https://93.184.216.34/docs"}, tmp_path)
    assert intent.operation == "network" and not intent.protected
    assert intent.reason == "fetches https://93.184.216.34/docs"
    assert decide("auto", intent).action == "ask"
    assert decide("auto", intent).reason.endswith("auto mode asks before leaving the workspace")
    assert decide("full", intent).action == "allow"
    assert private_address("93.184.216.34") is None


def test_allow_always_for_public_fetches_does_not_cover_private_ones(tmp_path: Path) -> None:
    public = classify("web_fetch", {"url": "https://93.184.216.34/"}, tmp_path)
    private = classify("web_fetch", {"url": "http://127.0.0.1:9/"}, tmp_path)
    rules = SessionRules()
    rules.remember(public, True)
    assert rules.match(classify("web_fetch", {"url": "https://93.184.216.34/other"}, tmp_path)) is True
    assert rules.match(classify("web_fetch", {"url": "https://93.184.216.35/"}, tmp_path)) is None  # by host
    assert rules.match(private) is None  # asked again
    rules.remember(private, True)
    assert rules.match(private) is True


def test_odd_arguments_are_unknown_or_refused_later(tmp_path: Path) -> None:
    assert classify("web_fetch", {"url": 42}, tmp_path).operation == "unknown"
    odd = classify("web_fetch", {"url": "file:///etc/passwd"}, tmp_path)
    assert odd.operation == "network" and not odd.protected  # the tool refuses the scheme itself
