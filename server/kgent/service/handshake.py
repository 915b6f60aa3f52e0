"""The `initialize` exchange: protocol version, connection settings and the capabilities the daemon announces.

Stdlib only and free of kernel imports (the sandbox probe, kgent.sandbox.bwrap, is stdlib only too), so the boot path
can answer `initialize` before pydantic, the server and the kernel are loaded. Its tables come from tables.json, generated
from the kernel's registries (kgent.service.wire.tables). `parse_initialize` is the one validator of
`initialize` params; the wire model InitializeParams describes the same shape for protocol.schema.json, and
tests/daemon/test_daemon_wire_params.py keeps the two in agreement.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kgent.ext.version import empty_listing
from kgent.sandbox.bwrap import detect as detect_sandbox

PROTOCOL_VERSION = 1
SUPPORTED_VERSIONS = (1,)
SERVER_NAME = "kgent"
SERVER_VERSION = "0.1.0"

# The tables the handshake announces, generated from their one definition each (kgent.service.wire.tables; run
# `python -m kgent.service.wire` after adding a tool, mode, provider or event): read here without importing them.
_TABLES: dict[str, Any] = json.loads(Path(__file__).with_name("tables.json").read_text(encoding="utf-8"))
MODES: tuple[str, ...] = tuple(_TABLES["modes"])
MODE_ALIASES: dict[str, str] = _TABLES["modeAliases"]
MODE_DESCRIPTIONS: dict[str, str] = _TABLES["modeDescriptions"]
PROVIDERS: tuple[str, ...] = tuple(_TABLES["providers"])
PROVIDER_ALIASES: dict[str, str] = _TABLES["providerAliases"]
DEFAULT_MODELS: dict[str, str] = _TABLES["defaultModels"]
TOOLS: tuple[tuple[str, str, bool], ...] = tuple((n, k, ro) for n, k, ro in _TABLES["tools"])
EVENT_TYPES: tuple[str, ...] = tuple(_TABLES["events"])
PROMPT_CONTENT: tuple[str, ...] = tuple(_TABLES["promptContent"])
OPTION_KINDS: tuple[str, ...] = tuple(_TABLES["optionKinds"])

_PACKAGE = Path(__file__).resolve().parent.parent  # server/kgent


class ParamsError(ValueError):
    """Params that do not fit the protocol (the daemon answers -32602 with this message)."""

    def __init__(self, message: str, code: str = "invalid_params") -> None:
        super().__init__(message)
        self.code = code


def normalize_mode(raw: str) -> str | None:
    key = raw.strip().lower().replace("-", "_")
    return key if key in MODES else MODE_ALIASES.get(key)


def normalize_provider(raw: str) -> str:
    name = raw.strip().lower()
    return PROVIDER_ALIASES.get(name, name)


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Connection-wide overrides from `initialize`; None means "not set: use the environment"."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    mode: str | None = None
    approval_timeout: float | None = None
    approval_timeout_set: bool = False
    max_turns: int | None = None
    # Host-owned files (`capabilities.fs` of initialize): what the client serves, and how long it may take.
    fs_read: bool = False
    fs_write: bool = False
    fs_save: bool = False
    fs_timeout: float | None = None
    diagnostics: bool = False  # `capabilities.diagnostics`: the client answers agent/diagnostics
    trust_project_extensions: bool | None = None  # None: the user's trust file decides (kgent.ext.trust)
    script: str | None = None  # the scripted provider's script (`kgent run --script`); no wire setting

    def merged(self, params: Mapping[str, Any]) -> Settings:
        """These settings updated by an `initialize.settings` object (validated here)."""
        changes: dict[str, Any] = {}
        for wire, name in (
            ("provider", "provider"),
            ("model", "model"),
            ("baseUrl", "base_url"),
            ("apiKey", "api_key"),
        ):
            if wire in params and params[wire] is not None:
                value = params[wire]
                if not isinstance(value, str) or not value.strip():
                    raise ParamsError(f"invalid params: 'settings.{wire}' must be a non-empty string")
                changes[name] = value.strip()
        if params.get("mode") is not None:
            raw = params["mode"]
            mode = normalize_mode(raw) if isinstance(raw, str) else None
            if mode is None:
                raise ParamsError(
                    f"invalid params: 'settings.mode' must be one of {', '.join(MODES)}",
                    "unknown_permission_mode",
                )
            changes["mode"] = mode
        if "approvalTimeout" in params:
            raw = params["approvalTimeout"]
            if raw is not None and (
                isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 < raw < 1e9
            ):
                raise ParamsError(
                    "invalid params: 'settings.approvalTimeout' must be a number of seconds > 0, or null"
                )
            changes["approval_timeout"] = None if raw is None else float(raw)
            changes["approval_timeout_set"] = True
        if params.get("maxTurns") is not None:
            raw = params["maxTurns"]
            if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
                raise ParamsError("invalid params: 'settings.maxTurns' must be an integer >= 1")
            changes["max_turns"] = raw
        if params.get("fsTimeout") is not None:
            raw = params["fsTimeout"]
            if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 < raw < 1e9:
                raise ParamsError("invalid params: 'settings.fsTimeout' must be a number of seconds > 0")
            changes["fs_timeout"] = float(raw)
        if params.get("trustProjectExtensions") is not None:
            if not isinstance(params["trustProjectExtensions"], bool):
                raise ParamsError(
                    "invalid params: 'settings.trustProjectExtensions' must be true, false or null"
                )
            changes["trust_project_extensions"] = params["trustProjectExtensions"]
        return replace(self, **changes)

    def with_fs(self, capabilities: Mapping[str, Any]) -> Settings:
        """These settings with the client's `capabilities.fs` and `capabilities.diagnostics` (validated here)."""
        diagnostics = capabilities.get("diagnostics", False)
        if not isinstance(diagnostics, bool):
            raise ParamsError("invalid params: 'capabilities.diagnostics' must be a boolean")
        fs = capabilities.get("fs")
        if fs is None:
            return replace(self, diagnostics=diagnostics)
        if not isinstance(fs, dict):
            raise ParamsError("invalid params: 'capabilities.fs' must be an object")
        flags: dict[str, Any] = {}
        for wire, name in (
            ("readTextFile", "fs_read"),
            ("writeTextFile", "fs_write"),
            ("saveFiles", "fs_save"),
        ):
            value = fs.get(wire, False)
            if not isinstance(value, bool):
                raise ParamsError(f"invalid params: 'capabilities.fs.{wire}' must be a boolean")
            flags[name] = value
        return replace(self, diagnostics=diagnostics, **flags)


def parse_initialize(params: Any, settings: Settings) -> tuple[int, Settings]:
    """(the version to answer, the updated settings); ParamsError for params that do not fit."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ParamsError("invalid params: initialize takes an object")
    version = params.get("protocolVersion")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ParamsError(
            "invalid params: 'protocolVersion' must be a positive integer (this daemon speaks 1)"
        )
    for key in ("clientInfo", "capabilities", "settings"):
        if params.get(key) is not None and not isinstance(params[key], dict):
            raise ParamsError(f"invalid params: '{key}' must be an object")
    info = params.get("clientInfo") or {}
    if "name" in info and not isinstance(info["name"], str):
        raise ParamsError("invalid params: 'clientInfo.name' must be a string")
    new_settings = settings.merged(params.get("settings") or {}).with_fs(params.get("capabilities") or {})
    answer = version if version in SUPPORTED_VERSIONS else PROTOCOL_VERSION
    return answer, new_settings


def env_approval_timeout(env: Mapping[str, str]) -> float | None:
    raw = env.get("KGENT_APPROVAL_TIMEOUT", "").strip()
    try:
        value = float(raw) if raw else None
    except ValueError:
        return None
    return value if value is not None and value > 0 else None


def effective_approval_timeout(settings: Settings, env: Mapping[str, str]) -> float | None:
    return settings.approval_timeout if settings.approval_timeout_set else env_approval_timeout(env)


def default_provider(settings: Settings, env: Mapping[str, str]) -> str:
    return normalize_provider(settings.provider or env.get("KGENT_PROVIDER") or "openai")


def default_mode(settings: Settings, env: Mapping[str, str]) -> str:
    raw = settings.mode or env.get("KGENT_PERMISSION_MODE") or "ask"
    return normalize_mode(raw) or raw


def script_names() -> list[str]:
    try:
        return sorted(n[:-5] for n in os.listdir(_PACKAGE / "scripts") if n.endswith(".json"))
    except OSError:
        return []


def session_features() -> dict[str, bool]:
    """What the installed package offers for sessions (a file check: importing them here would cost start-up)."""
    return {
        "persistent": (_PACKAGE / "session" / "jsonl.py").is_file(),
        "fork": True,
        "compact": (_PACKAGE / "context" / "compaction.py").is_file(),
    }


def capabilities(settings: Settings, env: Mapping[str, str]) -> dict[str, Any]:
    provider = default_provider(settings, env)
    model = settings.model or env.get("KGENT_MODEL") or DEFAULT_MODELS.get(provider, "")
    models = {name: [DEFAULT_MODELS[name]] for name in PROVIDERS}
    models["scripted"] = script_names()
    sandbox = detect_sandbox(env)
    return {
        "modes": list(MODES),
        "modeDescriptions": dict(MODE_DESCRIPTIONS),
        "defaultMode": default_mode(settings, env),
        "providers": list(PROVIDERS),
        "defaultProvider": provider,
        "models": models,
        "defaultModel": model,
        "tools": [{"name": n, "kind": k, "readOnly": ro} for n, k, ro in TOOLS],
        "events": list(EVENT_TYPES),
        "sandbox": sandbox.name,
        "sandboxReason": sandbox.reason,
        "permissionNewText": True,
        "features": {
            "steer": True,
            "followUp": True,
            "concurrentRuns": True,
            "sessions": session_features(),
            "promptContent": list(PROMPT_CONTENT),
            "permissionOptionKinds": list(OPTION_KINDS),
            "approvalTimeout": effective_approval_timeout(settings, env),
            "hostFiles": True,
            "review": True,
        },
        "extensions": empty_listing(),  # the full server fills it in when anything is configured (kgent.ext)
    }


def initialize_result(version: int, settings: Settings, env: Mapping[str, str]) -> dict[str, Any]:
    return {
        "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION},
        "protocolVersion": version,
        "capabilities": capabilities(settings, env),
    }
