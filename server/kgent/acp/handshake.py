"""ACP `initialize` (and `authenticate`) without the SDK, so `kgent acp` answers them while the SDK (whose pydantic schema takes
~0.35 s to import) and the kernel load in a thread. The SDK path (`KgentAgent.initialize`) answers from the same
tables; tests/acp/test_acp_handshake.py holds them to the SDK's models."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

AUTH_REQUIRED = -32000  # ACP's code (acp.RequestError.auth_required)
PROTOCOL_VERSION = 1  # ACP's (acp.PROTOCOL_VERSION; a test pins them together)
VERSION = "0.1.0"
API_KEY_AUTH: dict[str, Any] = {
    "type": "env_var",
    "id": "api-key",
    "name": "API key",
    "description": "Kgent reads the model provider's key from its environment (DEEPSEEK_API_KEY, OPENAI_API_KEY, "
    "ANTHROPIC_API_KEY or KGENT_API_KEY); set it in the client's configuration of the agent command.",
    "vars": [{"name": "KGENT_API_KEY", "label": "API key of the model provider"}],
}


@dataclass(slots=True)
class ClientOffer:
    """What the client offered in `initialize` (the last one wins): its `fs/*` methods and `terminal/*`, and the name
    it gave (`clientInfo.name`: the permission options are named for what that client does, kgent.acp.options)."""

    fs_read: bool = False
    fs_write: bool = False
    terminal: bool = False
    name: str | None = None

    def named(self, info: Any) -> None:
        """Note `clientInfo` (anything else than an object with a string name: no name)."""
        name = info.get("name") if isinstance(info, dict) else None
        self.name = name if isinstance(name, str) else None

    def take(self, capabilities: dict[str, Any]) -> None:
        fs = capabilities.get("fs")
        fs = fs if isinstance(fs, dict) else {}
        self.fs_read = fs.get("readTextFile") is True
        self.fs_write = fs.get("writeTextFile") is True
        self.terminal = capabilities.get("terminal") is True


def initialize_result(requested: int) -> dict[str, Any]:
    """The `initialize` result in ACP's JSON spelling."""
    return {
        "protocolVersion": min(requested, PROTOCOL_VERSION),
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"embeddedContext": True, "image": True},
            # fork, resume and close are ACP's unstable methods (kgent.acp.main serves the unstable protocol)
            "sessionCapabilities": {"list": {}, "fork": {}, "resume": {}, "close": {}, "delete": {}},
            "mcpCapabilities": {
                "http": True,
                "sse": False,
            },  # session/new mcpServers: stdio (baseline) and http
        },
        "agentInfo": {"name": "kgent", "title": "Kgent", "version": VERSION},
        "authMethods": [API_KEY_AUTH],
    }


def auth_problem(env: Mapping[str, str]) -> str | None:
    """Why `authenticate` fails (no key for the configured provider: what to set), or None."""
    from kgent.config import provider_config, require_key  # not the SDK: answered while that loads
    from kgent.core.errors import ConfigError

    try:
        require_key(provider_config(env))
    except ConfigError as exc:
        return exc.message
    return None


def answer(message: dict[str, Any], offer: ClientOffer, env: Mapping[str, str]) -> dict[str, Any] | None:
    """The response to a well-formed `initialize` (noting what the client offers) or `authenticate` request, else
    None: anything else, one with odd params included, goes to the SDK (which answers it, or says what is wrong)."""
    method = message.get("method")
    if method not in ("initialize", "authenticate") or message.get("jsonrpc") != "2.0":
        return None
    mid, params = message.get("id"), message.get("params")
    if not isinstance(mid, (int, str)) or isinstance(mid, bool) or not isinstance(params, dict):
        return None
    if method == "authenticate":
        return _authenticate(mid, params, env)
    version, capabilities = params.get("protocolVersion"), params.get("clientCapabilities", {})
    if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version <= 65535:
        return None
    if not isinstance(capabilities, dict) or not _plain(capabilities):
        return None
    offer.take(capabilities)
    offer.named(params.get("clientInfo"))
    return {"jsonrpc": "2.0", "id": mid, "result": initialize_result(version)}


def _authenticate(mid: int | str, params: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any] | None:
    if params.get("methodId") != API_KEY_AUTH["id"]:
        return None  # the SDK says what is wrong
    problem = auth_problem(env)
    if problem is None:
        return {"jsonrpc": "2.0", "id": mid, "result": {}}
    return {
        "jsonrpc": "2.0",
        "id": mid,
        "error": {
            "code": AUTH_REQUIRED,
            "message": f"Authentication required: {problem}",
            "data": {"message": problem},
        },
    }


def _plain(capabilities: dict[str, Any]) -> bool:
    """The capabilities Kgent reads have the types ACP gives them (else the SDK's validation answers)."""
    fs = capabilities.get("fs", {})
    if not isinstance(fs, dict):
        return False
    flags = (
        fs.get("readTextFile", False),
        fs.get("writeTextFile", False),
        capabilities.get("terminal", False),
    )
    return all(isinstance(flag, bool) for flag in flags)
