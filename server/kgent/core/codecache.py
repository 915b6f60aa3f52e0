"""The bytecode of generated methods, kept between processes (issue 37: start-up).

`@dataclass` writes each class's `__init__`, `__repr__`, `__eq__`, `__hash__`, and a frozen class's `__setattr__` and
`__delattr__`, as source text and compiles it when the class is defined. Compiling that text was the largest part of
starting Kgent: ~0.1 ms a method, ~900 methods for `kgent run` (~0.1 s of CPU, a third of its imports). Python keeps a
module's bytecode in `__pycache__`; this keeps these methods' there too
(`<kgent>/__pycache__/codecache-dataclasses.<tag>.bin`), by their exact source text, filename and compiler flags, so a
process compiles only text it has not seen before. (attrs builds classes the same way; the daemon no longer loads
any, docs/adr/0006.)

What runs is the same: the code object a cache entry holds is the one `compile` made from that very text (marshal,
as for a .pyc), compiled with the flags the caller's `exec` or `compile` would have used (its `from __future__`
features) at this interpreter's optimization level. Whoever can write the file can already write the .pyc files
beside it. A cache that cannot be read, or is of another interpreter, counts as empty; one that cannot be written is
left as it is.

Only the `kgent` processes install it (kgent.core.loading.start_process), never an importer of the library.
"""

from __future__ import annotations
import __future__

import atexit
import builtins
import contextlib
import functools
import importlib.util
import marshal
import operator
import os
import sys
import threading
from pathlib import Path
from types import CodeType
from typing import Any

_HEADER = importlib.util.MAGIC_NUMBER + b"kgent-codecache-1"
_MAX_ENTRIES = 4096  # per file; a save keeps the newest
_MAX_BYTES = 32 << 20
# Fewer new methods than this are not worth rewriting a file (~1 MB) for: compiled again next time (~0.1 ms each).
_MIN_NEW = 8
# The flags `compile` and `exec` take over from the code that calls them (CPython's PyCF_MASK).
_FUTURE_FLAGS: int = functools.reduce(
    operator.or_, (getattr(__future__, name).compiler_flag for name in __future__.all_feature_names)
)

Key = tuple[str, str, int]  # (source, filename, flags)


class _Cache:
    """One file of marshalled code objects by key, loaded when its hook is installed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.path: Path | None = None
        self.entries: dict[Key, bytes] = {}
        self.loaded = 0
        self.added = 0
        self.hits = 0
        self.lock = threading.Lock()

    def open(self, path: Path | None) -> None:
        self.path = path
        if path is not None:
            self.entries.update(_load(path))
            self.loaded = len(self.entries)

    def compile(self, source: str, filename: str, flags: int) -> CodeType:
        key = (source, filename, flags)
        data = self.entries.get(key)
        if data is not None:
            try:
                loaded = marshal.loads(data)
            except (ValueError, EOFError, TypeError):
                loaded = None
            if isinstance(loaded, CodeType):
                self.hits += 1
                return loaded
        code: CodeType = builtins.compile(source, filename, "exec", flags, dont_inherit=True)
        with self.lock:
            self.entries[key] = marshal.dumps(code)
            self.added += 1
        return code

    def save(self) -> None:
        path = self.path
        if (
            path is None
            or not self.added
            or (self.added < _MIN_NEW and self.loaded)
            or sys.dont_write_bytecode
        ):
            return  # nothing worth writing, or no bytecode is to be written (-B, PYTHONDONTWRITEBYTECODE)
        with self.lock:  # the newest: the file's in its order, then this process's new ones
            items = list(self.entries.items())[-_MAX_ENTRIES:]
            self.added, self.loaded = 0, len(items)
        with contextlib.suppress(Exception):
            data = _HEADER + bytes([sys.flags.optimize]) + marshal.dumps(dict(items))
            if len(data) > _MAX_BYTES:
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            try:
                tmp.write_bytes(data)
                os.replace(tmp, path)
            finally:
                with contextlib.suppress(OSError):
                    tmp.unlink()


_dataclasses = _Cache("dataclasses")
_installed = False


def _caller_flags() -> int:
    """The `from __future__` flags of the code that called the hook (what `exec` and `compile` inherit)."""
    return sys._getframe(2).f_code.co_flags & _FUTURE_FLAGS


def _exec(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> None:  # noqa: A002
    """`exec` for the dataclasses module: its generated source text compiled through the cache."""
    if not isinstance(source, str) or kwargs:
        builtins.exec(source, globals, locals, **kwargs)
    else:
        builtins.exec(_dataclasses.compile(source, "<string>", _caller_flags()), globals, locals)


def cache_path(name: str = "dataclasses") -> Path | None:
    """Where this interpreter's cache of `name` lives (None for an interpreter without a bytecode tag)."""
    tag = sys.implementation.cache_tag
    if tag is None:
        return None
    package = Path(__file__).resolve().parent.parent
    if sys.pycache_prefix:  # where the .pyc files go too (PYTHONPYCACHEPREFIX)
        return Path(sys.pycache_prefix) / str(package).lstrip(os.sep) / f"codecache-{name}.{tag}.bin"
    return package / "__pycache__" / f"codecache-{name}.{tag}.bin"


def _load(path: Path) -> dict[Key, bytes]:
    try:
        with path.open("rb") as f:
            data = f.read(_MAX_BYTES + 1)
        if len(data) > _MAX_BYTES or not data.startswith(_HEADER + bytes([sys.flags.optimize])):
            return {}
        loaded = marshal.loads(data[len(_HEADER) + 1 :])
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {
        key: value
        for key, value in loaded.items()
        if isinstance(key, tuple)
        and len(key) == 3
        and isinstance(key[0], str)
        and isinstance(key[1], str)
        and isinstance(key[2], int)
        and isinstance(value, bytes)
    }


def install() -> None:
    """Compile dataclasses' generated methods through the cache from now on, and save the cache at exit. Idempotent;
    call it before the modules that define the classes are imported."""
    global _installed
    if _installed:
        return
    _installed = True
    _dataclasses.open(cache_path("dataclasses"))
    import dataclasses

    dataclasses.exec = _exec  # type: ignore[attr-defined]
    atexit.register(save)


def release() -> None:
    """Save, then let go of the cached code (a long-lived process once it has loaded: ~3 MB for the daemon); from
    then on methods are compiled as Python does, and nothing is saved."""
    save()
    with _dataclasses.lock:
        _dataclasses.entries, _dataclasses.path = {}, None


def save() -> None:
    """Write what this process compiled that is worth keeping (at exit; a host that ends with os._exit calls it once
    its modules are loaded). Never raises."""
    _dataclasses.save()
