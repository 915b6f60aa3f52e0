"""Suite-wide isolation: no real API keys or proxies leak into any test."""

import os

import pytest
from hypothesis import settings

# Hypothesis fails an example that takes over 200 ms by default; on a loaded machine any example can, and the test
# then fails as "flaky". Timing is not what these properties are about.
settings.register_profile("kgent", deadline=None)
settings.load_profile("kgent")

_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


def pytest_report_header() -> str:
    """Which shell sandbox this run has: the escape tests check bubblewrap's walls only where it works."""
    from kgent.tools.sandbox import detect

    found = detect()
    return f"kgent shell sandbox: {found.name} ({found.reason})"


@pytest.fixture(autouse=True)
def _no_keys_or_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.endswith("_API_KEY") or name.upper() in _PROXIES:
            monkeypatch.delenv(name, raising=False)
