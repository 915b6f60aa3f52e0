"""Kgent's extension API (layer 5): registries for tools, providers, session entry kinds and hooks; loading from
entry points (group `kgent.extensions`) and config files; MCP servers as tools. See docs/extensions.md.

An extension is a `register(api: ExtensionAPI)` function. What it registers is checked when registered and again
when used; whatever fails names the extension and fails only the one call it was part of. Names load lazily: the
daemon's handshake reads kgent.ext.config / kgent.ext.version without loading the API (or jsonschema).
"""

from __future__ import annotations

import importlib
from typing import Any

from kgent.ext.version import API_VERSION

_EXPORTS = {
    "ExtensionAPI": "kgent.ext.api",
    "Extensions": "kgent.ext.host",
    "GROUP": "kgent.ext.installed",
    "ExtensionRecord": "kgent.ext.loader",
    "HOOK_NAMES": "kgent.ext.registry",
    "Registry": "kgent.ext.registry",
    "ExtraEntry": "kgent.kernel.hooks",
    "HookContext": "kgent.kernel.hooks",
}

__all__ = ["API_VERSION", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kgent.ext' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
