"""The ACP SDK's import, made cheap: what `kgent acp` pays before it can answer its first prompt.

`acp.schema` declares ~280 pydantic models. Importing it builds every one of them (their validators and serializers)
and, because the SDK sets `use_attribute_docstrings`, reads each class's source back to find its fields' docstrings:
0.5–0.9 s of CPU on these machines, most of `kgent acp`'s start. Kgent uses a handful of those models per prompt and
never their JSON schema (the only place a field's docstring shows).

So `load()` imports the SDK with pydantic's `defer_build` on (each model is built on its first use: pydantic's own,
documented behaviour, per model) and without the docstring reading for the SDK's classes. pydantic has no public
switch for either from outside the classes, so this sets its internal default and wraps its internal function for
the duration of the import only, and falls back to a plain import when those internals are not there
(tests/acp/test_acp_sdk.py notices that, and checks the models behave alike). Measured in docs/benchmarks.md.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

_LOCK = threading.Lock()


def _is_sdk_class(cls: type[Any]) -> bool:
    return cls.__module__ == "acp" or cls.__module__.startswith("acp.")


@contextlib.contextmanager
def _lazy_pydantic() -> Iterator[bool]:
    """Yield whether pydantic's internals were found (and are patched until the block ends)."""
    try:
        from pydantic._internal import _config, _fields
    except ImportError:  # pragma: no cover - another pydantic layout: a plain import
        yield False
        return
    defaults: Any = getattr(_config, "config_defaults", None)
    extract: Callable[..., dict[str, str]] | None = getattr(_fields, "extract_docstrings_from_cls", None)
    if not isinstance(defaults, dict) or "defer_build" not in defaults or extract is None:
        yield False  # pragma: no cover - another pydantic layout: a plain import
        return

    def no_sdk_docstrings(cls: type[Any], use_inspect: bool = False) -> dict[str, str]:
        return {} if _is_sdk_class(cls) else extract(cls, use_inspect=use_inspect)

    was = defaults["defer_build"]
    defaults["defer_build"] = True
    setattr(_fields, "extract_docstrings_from_cls", no_sdk_docstrings)  # noqa: B010 (a private name)
    try:
        yield True
    finally:
        setattr(_fields, "extract_docstrings_from_cls", extract)  # noqa: B010
        defaults["defer_build"] = was


def load() -> bool:
    """Import the SDK (`acp`, its schema and agent side) cheaply; True when it was this call that did, the lazy way."""
    with _LOCK:
        if "acp.schema" in sys.modules:
            return False
        with _lazy_pydantic() as lazy:
            importlib.import_module("acp")
            importlib.import_module("acp.schema")
        return lazy
