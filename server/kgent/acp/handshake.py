"""ACP `initialize`, `authenticate` and a plain `session/new` without the SDK, so `kgent acp` answers them while the SDK
(whose pydantic schema, 273 models built at import, takes 0.5–0.9 s) and the kernel load in a thread. The SDK path
(`KgentAgent`) answers from the same tables (kgent.acp.setup for a session's modes and options); tests/acp/
test_acp_handshake.py holds them to the SDK's models."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("kgent.acp")

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


@dataclass(slots=True)
class EarlySessions:
    """Sessions a `session/new` made before the agent existed: the agent adopts them when the SDK connects it (a
    client's next request, its first prompt say, waits for the SDK anyway, so it finds the session there)."""

    pending: list[tuple[str, str]] = field(default_factory=list)  # (session id, workspace)
    adopt: Callable[[str, str], None] | None = None

    @property
    def open(self) -> bool:
        """Whether `session/new` is still answered here: until the agent is there, which then answers it itself."""
        return self.adopt is None

    def add(self, session_id: str, workspace: str) -> None:
        if self.adopt is None:
            self.pending.append((session_id, workspace))
        else:  # made while the agent connected: adopted at once
            self.adopt(session_id, workspace)

    def attach(self, adopt: Callable[[str, str], None]) -> None:
        self.adopt = adopt
        for session_id, workspace in self.pending:
            adopt(session_id, workspace)
        self.pending.clear()


async def new_session(
    message: dict[str, Any], env: Mapping[str, str], early: EarlySessions
) -> dict[str, Any] | None:
    """The response to a `session/new` for an absolute `cwd` with no MCP servers, made in the session store before the
    agent exists (noted in `early`); else None: the agent answers it (servers to check, an odd param, an error)."""
    if not early.open or message.get("method") != "session/new" or message.get("jsonrpc") != "2.0":
        return None
    mid, params = message.get("id"), message.get("params")
    if not isinstance(mid, (int, str)) or isinstance(mid, bool) or not isinstance(params, dict):
        return None
    cwd = params.get("cwd")
    if params.get("mcpServers") != [] or not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    if set(params) - {"cwd", "mcpServers", "_meta"}:
        return None
    from kgent.core.errors import KgentError
    from kgent.service.store import open_store
    from kgent.session.paths import normalize_workspace

    from . import setup

    store, durable = open_store()  # the agent has its own: this one closes the file it made once it is made
    if not durable:  # an in-memory store is the agent's alone: a session made here would not be in it
        return None
    try:
        info = await store.create(workspace=normalize_workspace(cwd))
    except KgentError:
        return None  # the agent says what is wrong
    finally:
        await store.aclose()
    mode = setup.default_mode(env)
    result = {
        "sessionId": info.id,
        "modes": setup.mode_state(mode),
        "configOptions": setup.config_options(env, mode, None, "session"),
    }
    early.add(info.id, info.workspace)
    log.debug("session/new answered before the SDK loaded: %s", info.id)
    return {"jsonrpc": "2.0", "id": mid, "result": result}
