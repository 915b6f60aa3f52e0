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
    from kgent.sandbox.bwrap import detect

    found = detect()
    return f"kgent shell sandbox: {found.name} ({found.reason})"


@pytest.fixture
def _user_config_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    # One per test: a rule, a trusted project or a prompt one test writes at user scope must not count in the next
    # test the same xdist worker runs (the order of files on a worker varies from run to run).
    return str(tmp_path_factory.mktemp("user-config"))


@pytest.fixture(autouse=True)
def _no_keys_or_proxies(monkeypatch: pytest.MonkeyPatch, _user_config_dir: str) -> None:
    # and no user config of the machine's (extensions, MCP servers, trusted projects): an empty one of the suite's
    monkeypatch.setenv("KGENT_CONFIG_DIR", _user_config_dir)
    for name in list(os.environ):
        if name.endswith("_API_KEY") or name.upper() in _PROXIES:
            monkeypatch.delenv(name, raising=False)
