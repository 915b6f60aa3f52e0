"""Which language servers to run: `[language_servers.NAME]` tables in the user's config.toml and in a trusted
project's `.kgent/config.toml` (a later table of one name wins; `command = []` switches a server off).

    [language_servers.ruff]
    command = ["ruff", "server"]   # argv; the program is looked up on PATH
    files = ["*.py", "*.pyi"]      # file-name globs it speaks for
    language = "python"            # the LSP languageId (default: the table's name)
    timeout = 5                    # seconds a file's diagnostics may take (default: [diagnostics] timeout, 5)
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgent.core.errors import ConfigError
from kgent.core.paths import user_config_dir
from kgent.files import gate

DEFAULT_TIMEOUT = 5.0
MAX_CONFIG = 1024 * 1024  # a config file larger than this is refused (the gate's `too_large`)


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One configured language server."""

    name: str
    command: tuple[str, ...]
    files: tuple[str, ...]
    language: str
    timeout: float = DEFAULT_TIMEOUT
    origin: str = "user"  # "user" | "project"

    def handles(self, path: Path) -> bool:
        return any(fnmatch.fnmatchcase(path.name, pattern) for pattern in self.files)


@dataclass(frozen=True, slots=True)
class ServersConfig:
    """The servers that may run for a workspace, and the project's that wait for trust."""

    servers: tuple[ServerSpec, ...] = ()
    untrusted: tuple[str, ...] = ()  # names of project servers left out until the project is trusted


def read_servers(workspace: Path, env: Mapping[str, str] | None = None, *, trusted: bool) -> ServersConfig:
    """The language servers of the user's file and (when `trusted`) the project's; ConfigError for a malformed
    table, naming the file and the key."""
    env = os.environ if env is None else env
    found: dict[str, ServerSpec] = {}
    untrusted: list[str] = []
    sources = [
        (user_config_dir(env) / "config.toml", "user"),
        (workspace / ".kgent" / "config.toml", "project"),
    ]
    for path, origin in sources:
        own = origin == "user"
        data = _read_toml(path, path.parent if own else workspace, own=own)
        if data is None:
            continue
        default = _seconds(
            _table(data, "diagnostics", path).get("timeout", DEFAULT_TIMEOUT), path, "diagnostics"
        )
        for name, raw in _table(data, "language_servers", path).items():
            if origin == "project" and not trusted:
                untrusted.append(name)
                continue
            spec = _spec(name, raw, origin, path, default)
            if spec is None:
                found.pop(name, None)
            else:
                found[name] = spec
    return ServersConfig(tuple(found.values()), tuple(untrusted))


def _spec(name: str, raw: Any, origin: str, path: Path, default: float) -> ServerSpec | None:
    where = f"{path}: [language_servers.{name}]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a table")
    command = raw.get("command")
    if not isinstance(command, list) or not all(isinstance(c, str) and c for c in command):
        raise ConfigError(f"{where}: 'command' must be a list of strings (the server's argv)")
    if not command:
        return None
    files = raw.get("files")
    if not isinstance(files, list) or not files or not all(isinstance(f, str) and f for f in files):
        raise ConfigError(f"{where}: 'files' must be a non-empty list of file-name globs, e.g. [\"*.py\"]")
    language = raw.get("language", name)
    if not isinstance(language, str) or not language:
        raise ConfigError(f"{where}: 'language' must be a string (the LSP languageId)")
    timeout = _seconds(raw.get("timeout", default), path, f"language_servers.{name}")
    return ServerSpec(name, tuple(command), tuple(files), language, timeout, origin)


def _seconds(value: Any, path: Path, table: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 600:
        raise ConfigError(f"{path}: [{table}] timeout must be a number of seconds (0 < timeout <= 600)")
    return float(value)


def _read_toml(path: Path, root: Path, *, own: bool) -> dict[str, Any] | None:
    """A config file through the files gate under `root` (`own`: the user's file may link anywhere but to a
    secret; the project's stays inside the project); None when there is none."""
    try:
        data, _ = gate.read_file(root, path, limit=MAX_CONFIG, outside_ok=own)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except gate.Refused as refused:
        raise ConfigError(f"{path}: {refused.reason}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    import tomllib  # once a file is there: importing it is ~14 ms of CPU

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def _table(data: Mapping[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: [{key}] must be a table")
    return value
