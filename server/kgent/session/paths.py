"""Where session files live: `<state dir>/sessions/<workspace-key>/<id>.jsonl` (KGENT_STATE_DIR overrides the dir)."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path


def state_dir() -> Path:
    """KGENT_STATE_DIR if set, else the platform's user state directory for kgent."""
    override = os.environ.get("KGENT_STATE_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs  # only when needed: it is the slow part of this module

    return Path(platformdirs.user_state_dir("kgent"))


def sessions_root() -> Path:
    """The directory a JsonlSessionStore keeps its files in."""
    return state_dir() / "sessions"


def workspace_key(workspace: str | os.PathLike[str]) -> str:
    """A readable, collision-safe directory name for a workspace: `<basename slug>-<10 hex of sha256(abs path)>`."""
    absolute = normalize_workspace(workspace)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(absolute).name).strip("-.")[:40] or "root"
    digest = hashlib.sha256(absolute.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"{slug}-{digest}"


def normalize_workspace(workspace: str | os.PathLike[str]) -> str:
    """The one spelling of a workspace that sessions record and are listed by: absolute, symlinks resolved."""
    return str(Path(workspace).expanduser().resolve())
