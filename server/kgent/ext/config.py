"""Where extensions and MCP servers are configured: `.kgent/config.toml` (project), `config.toml` in the user config
dir (KGENT_CONFIG_DIR overrides it), and a project's `.mcp.json` (the format other agents use). Stdlib only.

A project's files name code to run (extension modules, MCP server commands): they are marked `project` and load only
when the user trusts the project (kgent.ext.trust). Bad files raise ConfigError naming the file and the key. Every
file is read through the files gate: a project's file that links outside it, to a secret or is hard-linked is refused.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kgent.core.errors import ConfigError
from kgent.core.paths import user_config_dir as user_config_dir
from kgent.files import gate

Origin = Literal["user", "project"]
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_MAX_CONFIG = 1 << 20  # bytes: a config file is small


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtensionRef:
    """One `[extensions] load` item: an importable module (`pkg.mod` or `pkg.mod:register`) or a .py file."""

    target: str
    origin: Origin
    base: Path  # where a relative file path is resolved from


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerConfig:
    """How to reach one MCP server: a command over stdio, or a streamable-HTTP URL."""

    name: str
    origin: Origin
    file: str  # the file that configured it, for listings and errors
    transport: Literal["stdio", "http"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtConfig:
    """Everything configured for one project (user files included)."""

    extensions: tuple[ExtensionRef, ...] = ()
    disabled: frozenset[str] = frozenset()
    mcp_servers: tuple[McpServerConfig, ...] = ()
    files: tuple[str, ...] = ()  # the files that were read

    @property
    def needs_trust(self) -> bool:
        """Whether the project's own files name code to run."""
        return any(r.origin == "project" for r in self.extensions) or any(
            s.origin == "project" for s in self.mcp_servers
        )


def read_config(project: Path | None, env: Mapping[str, str] | None = None) -> ExtConfig:
    """The user file, then the project's `.kgent/config.toml` and `.mcp.json` (a later server of one name wins)."""
    env = os.environ if env is None else env
    refs: list[ExtensionRef] = []
    disabled: set[str] = set()
    servers: dict[str, McpServerConfig] = {}
    files: list[str] = []
    sources: list[tuple[Path, Origin]] = [(user_config_dir(env) / "config.toml", "user")]
    if project is not None:
        sources.append((project / ".kgent" / "config.toml", "project"))
    for path, origin in sources:
        own = origin == "user"
        data = _read_toml(path, path.parent if own or project is None else project, own=own)
        if data is None:
            continue
        files.append(str(path))
        base = path.parent if origin == "user" else path.parent.parent
        section = _table(data, "extensions", path)
        for target in _strings(section.get("load", []), "extensions.load", path):
            refs.append(ExtensionRef(target=target, origin=origin, base=base))
        disabled.update(_strings(section.get("disable", []), "extensions.disable", path))
        for name, raw in _table(data, "mcp_servers", path).items():
            servers[name] = _server(name, raw, origin, path, env)
    if project is not None:
        mcp_json = project / ".mcp.json"
        if mcp_json.is_file() or mcp_json.is_symlink():
            files.append(str(mcp_json))
            for name, raw in _read_mcp_json(mcp_json, project).items():
                servers[name] = _server(name, raw, "project", mcp_json, env)
    return ExtConfig(
        extensions=tuple(refs),
        disabled=frozenset(disabled),
        mcp_servers=tuple(servers.values()),
        files=tuple(files),
    )


def _read(path: Path, root: Path, *, own: bool) -> str:
    """A config file's text through the files gate under `root` (`own`: the user's file may link anywhere but to a
    secret; a project's stays inside the project)."""
    data, _ = gate.read_file(root, path, limit=_MAX_CONFIG, outside_ok=own)
    return data.decode("utf-8")


def _read_toml(path: Path, root: Path, *, own: bool) -> dict[str, Any] | None:
    try:
        text = _read(path, root, own=own)
    except FileNotFoundError:
        return None
    except gate.Refused as refused:
        raise ConfigError(f"{path}: {refused.reason}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    import tomllib  # once a file is there: importing it is ~14 ms of CPU, before the daemon's handshake

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def _read_mcp_json(path: Path, root: Path) -> dict[str, Any]:
    try:
        data = json.loads(_read(path, root, own=False))
    except gate.Refused as refused:
        raise ConfigError(f"{path}: {refused.reason}") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} is not a readable JSON file: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise ConfigError(f'{path}: expected {{"mcpServers": {{NAME: {{...}}}}}}')
    servers: dict[str, Any] = data.get("mcpServers", {})
    return servers


def _table(data: Mapping[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: [{key}] must be a table")
    return value


def _strings(value: Any, key: str, path: Path) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{path}: {key} must be a list of non-empty strings")
    return [v.strip() for v in value]


def _expand(value: str, env: Mapping[str, str], where: str) -> str:
    """`${VAR}` and `${VAR:-default}` from the environment (as .mcp.json files elsewhere are read)."""

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise ConfigError(f"{where}: ${{{name}}} is not set in the environment")

    return _VAR.sub(sub, value)


def _server(name: str, raw: Any, origin: Origin, path: Path, env: Mapping[str, str]) -> McpServerConfig:
    where = f"{path}: MCP server {name!r}"
    if not _NAME.match(name):
        raise ConfigError(f"{where}: a server name is 1-40 letters, digits, '_' or '-'")
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be an object")
    kind = raw.get("type", "http" if "url" in raw else "stdio")
    if kind in ("http", "streamable-http", "streamable_http"):
        url = raw.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}: 'url' must be an http(s) URL")
        headers = _string_map(raw.get("headers", {}), f"{where}: 'headers'", env)
        return McpServerConfig(
            name=name,
            origin=origin,
            file=str(path),
            transport="http",
            url=_expand(url, env, where),
            headers=headers,
        )
    if kind != "stdio":
        raise ConfigError(f"{where}: type {kind!r} is not supported (use stdio or http)")
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{where}: 'command' must be a non-empty string")
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{where}: 'args' must be a list of strings")
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f"{where}: 'cwd' must be a string")
    return McpServerConfig(
        name=name,
        origin=origin,
        file=str(path),
        transport="stdio",
        command=_expand(command, env, where),
        args=tuple(_expand(a, env, where) for a in args),
        env=_string_map(raw.get("env", {}), f"{where}: 'env'", env),
        cwd=cwd,
    )


def _string_map(value: Any, where: str, env: Mapping[str, str]) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigError(f"{where} must map names to strings")
    return {k: _expand(v, env, where) for k, v in value.items()}


def configured(project: Path | None, env: Mapping[str, str] | None = None) -> bool:
    """Whether anything could load: an installed entry point, a user config file, a project config file (cheap:
    no file is parsed, no extension imported)."""
    from kgent.ext.installed import entry_points

    env = os.environ if env is None else env
    if (user_config_dir(env) / "config.toml").is_file():
        return True
    if project is not None and (
        (project / ".kgent" / "config.toml").is_file() or (project / ".mcp.json").is_file()
    ):
        return True
    return bool(entry_points())
