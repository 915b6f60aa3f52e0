"""ExtensionAPI: what an extension's `register(api)` is given — its way to register tools, providers, session entry
kinds and hooks, all under its own name (errors and listings name it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kgent.core.errors import ExtensionError
from kgent.ext.registry import HookName, ProviderFactory, Registry
from kgent.ext.version import API_VERSION

F = TypeVar("F", bound=Callable[..., Any])


class ExtensionAPI:
    """The registration surface handed to one extension (kgent.ext.API_VERSION describes it)."""

    version = API_VERSION

    def __init__(self, name: str, registry: Registry, *, allow_providers: bool = True) -> None:
        self.name = name
        self._registry = registry
        self._allow_providers = allow_providers

    def require(self, version: str) -> None:
        """Fail the load unless this API is `version` or a later minor of its major (e.g. require("1.0"))."""
        try:
            major, minor = (int(p) for p in version.split("."))
        except ValueError:
            raise ExtensionError(
                f"extension {self.name!r}: require() takes 'MAJOR.MINOR', got {version!r}"
            ) from None
        have_major, have_minor = (int(p) for p in API_VERSION.split("."))
        if major != have_major or minor > have_minor:
            raise ExtensionError(
                f"extension {self.name!r} needs extension API {version}; this Kgent has {API_VERSION}"
            )

    def tool(self, tool: Any) -> None:
        """Offer `tool` (a kgent.tools.base.Tool) to every run; its `intent` decides when it is asked."""
        self._registry.add_tool(self.name, tool)

    def provider(
        self, name: str, factory: ProviderFactory, *, default_model: str = "", models: tuple[str, ...] = ()
    ) -> None:
        """A model provider, chosen as `--provider NAME` / KGENT_PROVIDER=NAME; `factory(config)` builds it."""
        if not self._allow_providers:
            raise ExtensionError(
                f"extension {self.name!r}: a project's own extensions cannot add providers (install it, or load it "
                "from the user config file)"
            )
        self._registry.add_provider(self.name, name, factory, default_model=default_model, models=models)

    def entry_kind(self, name: str, schema: dict[str, Any]) -> None:
        """A session entry type (namespaced: 'myext.note') whose data `schema` checks when an entry is added."""
        self._registry.add_entry_kind(self.name, name, schema)

    def skills(self, directory: str | Path) -> None:
        """Ship skills: `directory` (absolute) holds skill folders, each with a SKILL.md (name, description); they
        are listed to the model like the project's and the user's (a name those have already is theirs). API 1.1."""
        self._registry.add_skill_dir(self.name, directory)

    def hook(self, name: HookName, fn: Callable[..., Any] | None = None) -> Any:
        """Register `fn` for hook `name` (also a decorator: `@api.hook("before_tool_call")`)."""
        if fn is not None:
            self._registry.add_hook(self.name, name, fn)
            return fn

        def decorate(f: F) -> F:
            self._registry.add_hook(self.name, name, f)
            return f

        return decorate
