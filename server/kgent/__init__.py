"""Kgent: a coding-agent kernel that editors drive over stdio JSON-RPC.

The public names load lazily, so `kgent serve` answers `initialize` before the kernel is imported.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

# httpx imports its command-line client (rich, click, pygments: ~50 ms, a sixth of `kgent run`'s start) whenever
# they are installed, as they are with Kgent; Kgent never runs it. A None entry makes that import fail, and httpx
# then goes without (its `httpx.main` explains how to get it).
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

_EXPORTS = {
    "AgentKernel": "kgent.kernel.kernel",
    "AgentRun": "kgent.kernel.run",
    "InMemorySessionStore": "kgent.session.memory",
    "KernelConfig": "kgent.kernel.config",
    "KgentError": "kgent.core.errors",
    "ProviderConfig": "kgent.providers.base",
    "RunResult": "kgent.core.events",
    "ScriptedProvider": "kgent.providers.scripted",
    "create_provider": "kgent.providers",
    "event_to_dict": "kgent.core.events",
}

__all__ = sorted(_EXPORTS)
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kgent' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
