"""Where the user's own files live: the user config dir (KGENT_CONFIG_DIR overrides it).

Below every layer and light (the daemon's boot path reads it): the context loads the user's AGENTS.md and skills
from it; kgent.ext.config re-exports it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """KGENT_CONFIG_DIR if set, else the platform's user config directory for kgent."""
    env = os.environ if env is None else env
    override = env.get("KGENT_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs  # only when needed: it is the slow part of this module

    return Path(platformdirs.user_config_dir("kgent"))
