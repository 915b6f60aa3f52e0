"""Where the user's own files live: the config directory (config.toml, the trusted projects list, server.env).

Below every layer that reads them: the permissions' rule files, the extensions' config and trust.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

TRUST_FILE = "trusted-projects.json"


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """KGENT_CONFIG_DIR if set, else the platform's user config directory for kgent."""
    env = os.environ if env is None else env
    override = env.get("KGENT_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    if sys.platform == "win32":
        return _platform_config_dir(None, None, None)
    # Asked several times a tool call (the rule files, the trust list): platformdirs takes ~10 µs each, so its
    # answer is kept per value of what it reads on Linux and macOS (XDG_CONFIG_HOME, HOME, else the user's entry).
    environ = os.environ
    return _cached_config_dir(environ.get("XDG_CONFIG_HOME"), environ.get("HOME"), os.getuid())


def _platform_config_dir(xdg: str | None, home: str | None, uid: int | None) -> Path:
    import platformdirs  # only when needed: it is the slow part of this module

    return Path(platformdirs.user_config_dir("kgent"))


_cached_config_dir = functools.lru_cache(maxsize=8)(_platform_config_dir)


def trust_file(env: Mapping[str, str] | None = None) -> Path:
    """The JSON list of the projects the user trusts (extensions, MCP servers, the project's permission rules)."""
    return user_config_dir(env) / TRUST_FILE


def trusted_projects(env: Mapping[str, str] | None = None) -> set[str]:
    """The trusted project paths (an unreadable or malformed file trusts nothing)."""
    try:
        data = json.loads(trust_file(env).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {p for p in data if isinstance(p, str)} if isinstance(data, list) else set()


def is_trusted(project: Path, env: Mapping[str, str] | None = None) -> bool:
    """Whether the user trusts `project` (`kgent extensions --trust`)."""
    return str(project.resolve()) in trusted_projects(env)
