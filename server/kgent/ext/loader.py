"""Loading extensions: Python entry points (group `kgent.extensions`) and the modules or files a config file names.

Each extension registers into a staging registry first, so one that fails part-way adds nothing; its record says
what it registered, or why it failed (the error names it; the others load all the same).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgent.core.errors import ExtensionError
from kgent.ext.api import ExtensionAPI
from kgent.ext.config import ExtensionRef
from kgent.ext.installed import entry_points
from kgent.ext.registry import Registry
from kgent.files import gate
from kgent.files.audit import gated


@dataclass(slots=True, kw_only=True)
class ExtensionRecord:
    """One extension as `kgent extensions` and `initialize` list it."""

    name: str
    source: str  # "entry point" | "user" | "project"
    target: str  # what was loaded: `module:attr`, a module or a file
    status: str  # "loaded" | "failed" | "untrusted" | "disabled"
    version: str = ""
    error: str | None = None
    registered: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "source": self.source,
            "target": self.target,
            "status": self.status,
            "version": self.version,
            "registered": list(self.registered),
        }
        if self.error is not None:
            out["error"] = self.error
        return out


def load_entry_points(
    registry: Registry, disabled: Iterable[str] = (), *, rescan: bool = False
) -> list[ExtensionRecord]:
    """Load the installed entry points (kgent.ext.installed: remembered between processes unless `rescan`)."""
    off = set(disabled)
    records = []
    for ep in entry_points(rescan=rescan):
        record = ExtensionRecord(
            name=ep.name, source="entry point", target=ep.value, status="disabled", version=ep.version
        )
        if ep.name not in off:
            _load(record, ep.load, registry, allow_providers=True)
        records.append(record)
    return records


def load_refs(
    registry: Registry, refs: Iterable[ExtensionRef], disabled: Iterable[str] = ()
) -> list[ExtensionRecord]:
    off = set(disabled)
    records = []
    for ref in refs:
        name = _ref_name(ref.target)
        record = ExtensionRecord(name=name, source=ref.origin, target=ref.target, status="disabled")
        if name not in off:
            _load(record, lambda ref=ref: _import_ref(ref), registry, allow_providers=ref.origin != "project")  # type: ignore[misc]
        records.append(record)
    return records


def _ref_name(target: str) -> str:
    if target.endswith(".py"):
        return Path(target).stem
    return target.split(":")[0].rsplit(".", 1)[-1]


def _import_ref(ref: ExtensionRef) -> Any:
    target = ref.target
    if target.endswith(".py"):
        path = (ref.base / target).resolve()
        try:  # a project's file through the files gate: inside the project, no secret, one link
            gate.admit(ref.base, path, outside_ok=ref.origin == "user")
        except gate.Refused as refused:
            raise ExtensionError(f"extension file {path}: {refused.reason}") from None
        if not path.is_file():
            raise ExtensionError(f"no extension file {path}")
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
        spec = importlib.util.spec_from_file_location(f"kgent_ext_{path.stem}_{digest}", path)
        if spec is None or spec.loader is None:
            raise ExtensionError(f"cannot load {path} as a Python module")
        module = importlib.util.module_from_spec(spec)
        with gated():  # importlib reads the file it was given: the one just admitted
            spec.loader.exec_module(module)
        return module
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attr) if attr else module


def _load(
    record: ExtensionRecord, obtain: Callable[[], Any], registry: Registry, *, allow_providers: bool
) -> None:
    staging = Registry(parent=registry)
    try:
        target = obtain()
        register = getattr(target, "register", None) if isinstance(target, types.ModuleType) else target
        if not callable(register):
            raise ExtensionError("it has no register(api) function")
        version = getattr(target, "__version__", None)
        if isinstance(version, str) and not record.version:
            record.version = version
        register(ExtensionAPI(record.name, staging, allow_providers=allow_providers))
    except Exception as exc:  # an extension's bug is its own failure, never the host's
        message = exc.message if isinstance(exc, ExtensionError) else f"{type(exc).__name__}: {exc}"
        if not message.startswith(f"extension {record.name!r}"):
            message = f"extension {record.name!r} ({record.target}) failed to load: {message}"
        record.status, record.error = "failed", message
        return
    registry.tools.update(staging.tools)
    registry.providers.update(staging.providers)
    registry.entry_kinds.update(staging.entry_kinds)
    registry.hooks.extend(staging.hooks)
    registry.skill_dirs.extend(staging.skill_dirs)
    record.status = "loaded"
    record.registered = sorted(sum(staging.listing().values(), []))
