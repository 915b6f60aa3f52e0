"""The handshake's tables (generated into tables.json, read without kernel imports for start-up time) are the kernel's
registries; parsing `initialize`, the capabilities it answers."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

from kgent.config import DEFAULTS
from kgent.core.events import DEFAULT_PERMISSION_OPTIONS, EVENT_TYPES
from kgent.permissions import MODE_ALIASES, MODES
from kgent.providers import ALIASES, provider_names
from kgent.providers.scripted import builtin_scripts
from kgent.service import handshake as H
from kgent.tools import CODING_TOOLS


def test_tables_match_the_kernel() -> None:
    assert H.MODES == MODES and H.MODE_ALIASES == dict(MODE_ALIASES)
    assert list(H.PROVIDERS) == provider_names() and H.PROVIDER_ALIASES == ALIASES
    assert H.DEFAULT_MODELS == {name: model for name, (_, model) in DEFAULTS.items()}
    assert H.TOOLS == tuple((t.name, t.kind, t.read_only) for t in CODING_TOOLS())
    assert H.EVENT_TYPES == EVENT_TYPES
    assert H.OPTION_KINDS == tuple(o.kind for o in DEFAULT_PERMISSION_OPTIONS)
    assert H.script_names() == builtin_scripts()
    assert H.SERVER_VERSION == importlib.metadata.version("kgent")
    assert H.session_features() == {"persistent": True, "fork": True, "compact": True}


def test_boot_path_imports_nothing_heavy() -> None:
    code = (
        "import sys, kgent.cli.serve, kgent.daemon.boot\n"
        "heavy = [m for m in ('pygls', 'lsprotocol', 'pydantic', 'asyncio', 'kgent.kernel', 'kgent.providers') if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_version_negotiation_and_settings() -> None:
    version, settings = H.parse_initialize(
        {"protocolVersion": 7, "settings": {"mode": "Risk-Based"}}, H.Settings()
    )
    assert version == 1 and settings.mode == "risk_based"
    _, later = H.parse_initialize({"protocolVersion": 1, "settings": {"approvalTimeout": 2}}, settings)
    assert later.mode == "risk_based" and later.approval_timeout == 2.0
    _, asked = H.parse_initialize({"protocolVersion": 1, "settings": {"mode": "Interactive"}}, H.Settings())
    assert asked.mode == "ask"
    assert H.effective_approval_timeout(later, {"KGENT_APPROVAL_TIMEOUT": "9"}) == 2.0
    assert H.effective_approval_timeout(H.Settings(), {"KGENT_APPROVAL_TIMEOUT": "9"}) == 9.0
    assert "apiKey" not in repr(H.Settings(api_key="sk-secret")) and "sk-secret" not in repr(
        H.Settings(api_key="sk-secret")
    )


@pytest.mark.parametrize(
    "params",
    [
        None,
        [],
        {"protocolVersion": 0},
        {"protocolVersion": True},
        {"protocolVersion": 1, "settings": []},
        {"protocolVersion": 1, "settings": {"provider": ""}},
        {"protocolVersion": 1, "settings": {"approvalTimeout": "1"}},
    ],
)
def test_bad_initialize_params(params: object) -> None:
    with pytest.raises(H.ParamsError):
        H.parse_initialize(params, H.Settings())


def test_capabilities_follow_settings_and_env() -> None:
    caps = H.capabilities(
        H.Settings(model="gpt-x"), {"KGENT_PROVIDER": "deepseek", "KGENT_PERMISSION_MODE": "full"}
    )
    assert (
        caps["defaultProvider"] == "openai"
        and caps["defaultModel"] == "gpt-x"
        and caps["defaultMode"] == "full"
    )
    assert caps["models"]["scripted"] == builtin_scripts()


def test_capabilities_name_the_sandbox_shell_commands_run_in() -> None:
    from kgent.sandbox.bwrap import detect

    off = H.capabilities(H.Settings(), {"KGENT_SANDBOX": "none"})
    assert off["sandbox"] == "none" and "KGENT_SANDBOX=none" in off["sandboxReason"]
    here = H.capabilities(H.Settings(), {})
    assert (here["sandbox"], here["sandboxReason"]) == (detect().name, detect().reason)
