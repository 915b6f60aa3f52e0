"""Which projects the user trusts to run their own extensions and MCP servers (like an editor's workspace trust).

Kept as a JSON list of absolute project paths in `trusted-projects.json` in the user config dir. Hosts that ask the
user (the CLI's first-run question) write it; editors pass their own setting instead (`trustProjectExtensions`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from kgent.core.paths import TRUST_FILE as FILE
from kgent.core.paths import is_trusted, trusted_projects, user_config_dir

__all__ = ["FILE", "is_trusted", "set_trusted", "trusted_projects"]


def _path(env: Mapping[str, str] | None) -> Path:
    return user_config_dir(env) / FILE


def set_trusted(project: Path, trusted: bool, env: Mapping[str, str] | None = None) -> None:
    """Add or remove `project` (written atomically: a temp file, then rename)."""
    paths = trusted_projects(env)
    key = str(project.resolve())
    if trusted:
        paths.add(key)
    else:
        paths.discard(key)
    target = _path(env)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{FILE}.{os.getpid()}")
    tmp.write_text(json.dumps(sorted(paths), indent=1) + "\n", encoding="utf-8")
    tmp.replace(target)
