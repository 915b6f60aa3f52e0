"""The registries: tools, providers, session entry kinds and hooks, each registration checked when it is made
(unique names, valid JSON Schemas, the right shapes) and remembered with the extension that made it.

A project's registry sits on the process's one (`parent`): names must be unique across both, lookups see both. The
root also holds the built-in providers (kgent.providers.PROVIDERS, as extension "kgent"), so every provider a front
resolves is found here.
"""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from kgent.core.errors import ExtensionError
from kgent.core.events import ToolKind
from kgent.ext.schema import check_schema
from kgent.providers import ALIASES, PROVIDERS, Provider, ProviderConfig, create_provider
from kgent.tools import CODING_TOOLS
from kgent.tools.base import ToolIntent

HookName = Literal["before_model_request", "before_tool_call", "after_tool_call", "on_event", "on_run_end"]
HOOK_NAMES: tuple[str, ...] = get_args(HookName)
_ARITY = {
    "before_model_request": 2,
    "before_tool_call": 2,
    "after_tool_call": 3,
    "on_event": 2,
    "on_run_end": 2,
}
BUILTIN_ENTRY_KINDS = frozenset(
    {"message", "config", "permission", "compaction", "label", "title", "branch_summary"}
)
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_PROVIDER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_ENTRY_KIND = re.compile(r"^[a-z0-9_-]+\.[a-z0-9_.-]+$")
_TOOL_KINDS = get_args(ToolKind)

ProviderFactory = Callable[[ProviderConfig], Provider]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolEntry:
    extension: str
    tool: Any  # kgent.tools.base.Tool; Any so a registration of the wrong shape can be reported, not mistyped
    parameters: dict[str, Any]  # a copy made at registration: a tool that changes its schema later is refused


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderEntry:
    extension: str
    name: str
    factory: ProviderFactory
    default_model: str
    models: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryKind:
    extension: str
    name: str
    schema: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class HookEntry:
    extension: str
    name: str
    fn: Callable[..., Any]


@dataclass(slots=True)
class Registry:
    parent: Registry | None = None
    tools: dict[str, ToolEntry] = field(default_factory=dict)
    providers: dict[str, ProviderEntry] = field(default_factory=dict)
    entry_kinds: dict[str, EntryKind] = field(default_factory=dict)
    hooks: list[HookEntry] = field(default_factory=list)
    skill_dirs: list[tuple[str, Path]] = field(default_factory=list)  # (extension, folder of skill folders)

    # -- lookups (this registry and its parent) ------------------------------------------------------------------
    def all_tools(self) -> list[ToolEntry]:
        return [*(self.parent.all_tools() if self.parent else []), *self.tools.values()]

    def all_skill_dirs(self) -> list[Path]:
        return [*(self.parent.all_skill_dirs() if self.parent else []), *(d for _, d in self.skill_dirs)]

    def add_skill_dir(self, extension: str, directory: Any) -> None:
        where = f"extension {extension!r}: skills"
        if not isinstance(directory, str | Path) or not Path(directory).is_absolute():
            raise ExtensionError(f"{where}: give an absolute path (e.g. Path(__file__).parent / 'skills')")
        if not Path(directory).is_dir():
            raise ExtensionError(f"{where}: {str(directory)!r} is not a directory")
        self.skill_dirs.append((extension, Path(directory)))

    def all_hooks(self, name: str) -> Iterator[HookEntry]:
        if self.parent is not None:
            yield from self.parent.all_hooks(name)
        yield from (h for h in self.hooks if h.name == name)

    def provider(self, name: str) -> ProviderEntry | None:
        """The provider called `name` (an alias of a built-in one too), or None."""
        found = self.providers.get(name)
        if found is not None:
            return found
        return self.parent.provider(name) if self.parent is not None else _builtin_provider(name)

    def entry_kind(self, name: str) -> EntryKind | None:
        found = self.entry_kinds.get(name)
        return found if found is not None or self.parent is None else self.parent.entry_kind(name)

    def all_providers(self) -> list[ProviderEntry]:
        """The built-in providers, then the extensions'."""
        inherited = (
            self.parent.all_providers() if self.parent else [_builtin_provider(n) for n in sorted(PROVIDERS)]
        )
        return [*(p for p in inherited if p is not None), *self.providers.values()]

    def _tool_owner(self, name: str) -> str | None:
        entry = self.tools.get(name)
        if entry is not None:
            return entry.extension
        return self.parent._tool_owner(name) if self.parent is not None else None

    # -- registrations ---------------------------------------------------------------------------------------------
    def add_tool(self, extension: str, tool: Any) -> None:
        name = getattr(tool, "name", None)
        where = f"extension {extension!r}: tool {name!r}"
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise ExtensionError(f"{where}: a tool name is 1-64 letters, digits, '_' or '-'")
        if name in _builtin_tool_names() or name.startswith("mcp__"):
            raise ExtensionError(f"{where}: the name is taken by a built-in tool (or reserved for MCP tools)")
        owner = self._tool_owner(name)
        if owner is not None:
            raise ExtensionError(f"{where}: the name is taken by extension {owner!r}")
        problem = tool_problem(tool)
        if problem:
            raise ExtensionError(f"{where}: {problem}")
        self.tools[name] = ToolEntry(
            extension=extension, tool=tool, parameters=copy.deepcopy(tool.parameters)
        )

    def add_provider(
        self,
        extension: str,
        name: str,
        factory: ProviderFactory,
        *,
        default_model: str = "",
        models: tuple[str, ...] = (),
    ) -> None:
        where = f"extension {extension!r}: provider {name!r}"
        if not isinstance(name, str) or not _PROVIDER_NAME.match(name):
            raise ExtensionError(f"{where}: a provider name is 1-40 lower-case letters, digits, '_' or '-'")
        if name in PROVIDERS or name in ALIASES:
            raise ExtensionError(f"{where}: the name is taken by a built-in provider")
        owner = self.provider(name)
        if owner is not None:
            raise ExtensionError(f"{where}: the name is taken by extension {owner.extension!r}")
        if not callable(factory):
            raise ExtensionError(f"{where}: the factory must be callable (ProviderConfig -> Provider)")
        models = tuple(models) or ((default_model,) if default_model else ())
        if not all(isinstance(m, str) and m for m in models) or not isinstance(default_model, str):
            raise ExtensionError(f"{where}: models must be non-empty strings")
        self.providers[name] = ProviderEntry(
            extension=extension, name=name, factory=factory, default_model=default_model, models=models
        )

    def add_entry_kind(self, extension: str, name: str, schema: dict[str, Any]) -> None:
        where = f"extension {extension!r}: entry kind {name!r}"
        if not isinstance(name, str) or not _ENTRY_KIND.match(name) or name in BUILTIN_ENTRY_KINDS:
            raise ExtensionError(f"{where}: an entry kind is namespaced, like 'myext.note' (lower case)")
        owner = self.entry_kind(name)
        if owner is not None:
            raise ExtensionError(f"{where}: the name is taken by extension {owner.extension!r}")
        problem = check_schema(schema)
        if problem:
            raise ExtensionError(f"{where}: invalid JSON Schema: {problem}")
        self.entry_kinds[name] = EntryKind(extension=extension, name=name, schema=copy.deepcopy(schema))

    def add_hook(self, extension: str, name: str, fn: Callable[..., Any]) -> None:
        where = f"extension {extension!r}: hook {name!r}"
        if name not in HOOK_NAMES:
            raise ExtensionError(f"{where}: unknown hook (use one of {', '.join(HOOK_NAMES)})")
        if not callable(fn):
            raise ExtensionError(f"{where}: the hook must be callable")
        if name == "on_event" and inspect.iscoroutinefunction(fn):
            raise ExtensionError(f"{where}: on_event hooks are called for every event and must not be async")
        try:
            inspect.signature(fn).bind(*range(_ARITY[name]))
        except TypeError:
            raise ExtensionError(f"{where}: the hook must take {_ARITY[name]} positional arguments") from None
        except ValueError:  # no signature to inspect (a builtin): checked when called
            pass
        self.hooks.append(HookEntry(extension=extension, name=name, fn=fn))

    def listing(self) -> dict[str, list[str]]:
        """Names per extension of this registry (not its parent), for `kgent extensions` and `initialize`."""
        out: dict[str, list[str]] = {}
        for t in self.tools.values():
            out.setdefault(t.extension, []).append(f"tool:{t.tool.name}")
        for p in self.providers.values():
            out.setdefault(p.extension, []).append(f"provider:{p.name}")
        for k in self.entry_kinds.values():
            out.setdefault(k.extension, []).append(f"entry_kind:{k.name}")
        for h in self.hooks:
            out.setdefault(h.extension, []).append(f"hook:{h.name}")
        for extension, directory in self.skill_dirs:
            out.setdefault(extension, []).append(f"skills:{directory}")
        return out


def _builtin_provider(name: str) -> ProviderEntry | None:
    target = ALIASES.get(name, name)
    if target not in PROVIDERS:
        return None
    return ProviderEntry(extension="kgent", name=target, factory=create_provider, default_model="", models=())


def _builtin_tool_names() -> frozenset[str]:
    return frozenset(t.name for t in CODING_TOOLS())


def tool_problem(tool: Any) -> str | None:
    """What is wrong with `tool` as a kgent Tool, or None (the checks made when it is registered and used)."""
    for attr in ("describe", "preview", "run"):
        if not callable(getattr(tool, attr, None)):
            return f"it has no {attr}() method"
    if not isinstance(getattr(tool, "description", None), str) or not tool.description.strip():
        return "its description must be a non-empty string"
    if getattr(tool, "kind", None) not in _TOOL_KINDS:
        return f"its kind must be one of {', '.join(_TOOL_KINDS)}"
    if not isinstance(getattr(tool, "read_only", None), bool):
        return "read_only must be True or False"
    if not isinstance(getattr(tool, "intent", None), ToolIntent):
        return "intent must be a kgent.tools.base.ToolIntent (what a call does, for the permission policy)"
    if not inspect.iscoroutinefunction(tool.run):
        return "run() must be async"
    params = getattr(tool, "parameters", None)
    if not isinstance(params, Mapping) or params.get("type") != "object":
        return 'its parameters must be a JSON Schema of an object ({"type": "object", ...})'
    problem = check_schema(dict(params))
    return f"invalid JSON Schema: {problem}" if problem else None
