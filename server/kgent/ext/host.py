"""Extensions: everything a host (the daemon, the CLI, ACP) loads — installed and user extensions once per process,
a project's own (its config's modules and MCP servers) per workspace when the project is trusted — and the kernel
hooks, providers and MCP manager built from them. `aclose()` stops the MCP servers."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kgent.core.errors import ConfigError, ExtensionError, KgentError
from kgent.ext.config import ExtConfig, McpServerConfig, read_config
from kgent.ext.hooks import ExtensionHooks
from kgent.ext.loader import ExtensionRecord, load_entry_points, load_refs
from kgent.ext.mcp.manager import McpManager
from kgent.ext.registry import Registry
from kgent.ext.trust import is_trusted
from kgent.ext.version import API_VERSION
from kgent.kernel.hooks import HookContext
from kgent.providers import Provider, ProviderConfig, create_provider
from kgent.tools.base import Tool

log = logging.getLogger("kgent.ext")


@dataclass(slots=True, kw_only=True)
class ProjectExtensions:
    """What one workspace adds: its registry (over the process's), records, MCP servers and whether it is trusted."""

    root: Path
    registry: Registry
    trusted: bool
    needs_trust: bool
    records: list[ExtensionRecord] = field(default_factory=list)
    mcp_servers: tuple[McpServerConfig, ...] = ()
    error: str | None = None  # a config file that could not be read


class Extensions:
    def __init__(
        self, env: Mapping[str, str] | None = None, *, trust_project: bool | None = None, rescan: bool = False
    ) -> None:
        """`trust_project`: True/False decides for every project; None asks the trust file (kgent.ext.trust).
        `rescan`: look for installed entry points afresh (kgent.ext.installed), not as remembered."""
        self.env = dict(os.environ if env is None else env)
        self.trust_project = trust_project
        self.registry = Registry()
        self.records: list[ExtensionRecord] = []
        self.user_error: str | None = None
        self._projects: dict[str, ProjectExtensions] = {}
        self._session_servers: dict[str, tuple[McpServerConfig, ...]] = {}
        self.mcp = McpManager()
        self.hooks = ExtensionHooks(lambda ws: self.project(ws).registry, self._mcp_tools)
        try:
            user = read_config(None, self.env)
        except ConfigError as exc:
            user, self.user_error = ExtConfig(), exc.message
            log.warning("%s", exc.message)
        self.records = load_entry_points(self.registry, user.disabled, rescan=rescan)
        self.records += load_refs(self.registry, user.extensions, user.disabled)
        self.user_mcp = user.mcp_servers
        for r in self.records:
            if r.error:
                log.warning("%s", r.error)

    def with_trust(self, trust_project: bool | None) -> None:
        """Change the trust decision (an editor's setting arrived); projects are looked at again on next use."""
        if trust_project != self.trust_project:
            self.trust_project = trust_project
            self._projects.clear()

    def project(self, workspace: Path) -> ProjectExtensions:
        # Hooks ask once per event: a workspace already seen as a resolved root skips resolve()'s syscalls.
        found = self._projects.get(str(workspace))
        if found is not None:
            return found
        root = workspace.resolve()
        found = self._projects.get(str(root))
        if found is None:
            found = self._projects[str(root)] = self._load_project(root)
        return found

    def _load_project(self, root: Path) -> ProjectExtensions:
        registry = Registry(parent=self.registry)
        try:
            config = read_config(root, self.env)
        except ConfigError as exc:
            log.warning("%s", exc.message)
            return ProjectExtensions(
                root=root,
                registry=registry,
                trusted=False,
                needs_trust=False,
                mcp_servers=self.user_mcp,
                error=exc.message,
            )
        trusted = self.trust_project if self.trust_project is not None else is_trusted(root, self.env)
        own = [r for r in config.extensions if r.origin == "project"]
        servers = tuple(s for s in config.mcp_servers if s.origin == "user" or trusted)
        project = ProjectExtensions(
            root=root, registry=registry, trusted=trusted, needs_trust=config.needs_trust, mcp_servers=servers
        )
        if trusted:
            project.records = load_refs(registry, own, config.disabled)
        else:
            project.records = [
                ExtensionRecord(name=r.target, source="project", target=r.target, status="untrusted")
                for r in own
            ]
        for r in project.records:
            if r.error:
                log.warning("%s", r.error)
        return project

    def untrusted_servers(self, workspace: Path) -> list[McpServerConfig]:
        """The project's MCP servers that are not started because the project is not trusted."""
        project = self.project(workspace)
        if project.trusted or project.error:
            return []
        return [s for s in read_config(project.root, self.env).mcp_servers if s.origin == "project"]

    def set_session_servers(self, session_id: str, servers: Sequence[McpServerConfig]) -> None:
        """MCP servers one session adds (an ACP client names them in `session/new`); a name the project's config
        has too is the session's."""
        self._session_servers[session_id] = tuple(servers)

    async def _mcp_tools(self, ctx: HookContext) -> list[Tool]:
        own = self._session_servers.get(ctx.session_id, ())
        names = {s.name for s in own}
        servers = [s for s in self.project(ctx.workspace).mcp_servers if s.name not in names] + list(own)
        return await self.mcp.tools_for(servers) if servers else []

    # -- providers -------------------------------------------------------------------------------------------------
    def provider_names(self) -> list[str]:
        return sorted(p.name for p in self.registry.all_providers())

    def create_provider(self, config: ProviderConfig) -> Provider:
        """A provider for `config`, by its name in the registry (a built-in one, or an extension's)."""
        entry = self.registry.provider(config.provider)
        if entry is None:
            names = ", ".join(self.provider_names())
            raise ConfigError(f"unknown provider {config.provider!r}: use one of {names}")
        if entry.extension == "kgent":
            return create_provider(config)
        if not config.model and entry.default_model:
            config = replace(config, model=entry.default_model)
        where = f"extension {entry.extension!r}: provider {entry.name!r}"
        try:
            provider = entry.factory(config)
        except KgentError:
            raise
        except Exception as exc:
            raise ExtensionError(f"{where} could not be created: {type(exc).__name__}: {exc}") from exc
        for attr in ("stream", "aclose"):
            if not callable(getattr(provider, attr, None)):
                raise ExtensionError(
                    f"{where}: the factory returned a {type(provider).__name__} without {attr}()"
                )
        if not isinstance(getattr(provider, "name", None), str) or not isinstance(
            getattr(provider, "model", None), str
        ):
            raise ExtensionError(f"{where}: the provider must have string `name` and `model` attributes")
        return provider

    # -- listings --------------------------------------------------------------------------------------------------
    def listing(self, workspace: Path | None) -> dict[str, Any]:
        """What is loaded (and what is not, and why), for `kgent extensions` and `initialize`."""
        records = [r.as_dict() for r in self.records]
        servers = [_server(s) for s in self.user_mcp]
        out: dict[str, Any] = {"apiVersion": API_VERSION, "project": None}
        errors = [self.user_error] if self.user_error else []
        if workspace is not None:
            project = self.project(workspace)
            records += [r.as_dict() for r in project.records]
            servers = [_server(s) for s in project.mcp_servers]
            servers += [{**_server(s), "status": "untrusted"} for s in self.untrusted_servers(workspace)]
            out["project"] = {
                "root": str(project.root),
                "trusted": project.trusted,
                "needsTrust": project.needs_trust,
            }
            if project.error:
                errors.append(project.error)
        status = {s["name"]: s for s in self.mcp.status()}
        for s in servers:
            live = status.get(s["name"])
            if live is not None and s.get("status") != "untrusted":
                s["status"] = "running" if live["running"] else ("failed" if live["error"] else "stopped")
                s["tools"] = live["tools"]
                if live["error"]:
                    s["error"] = live["error"]
        out.update(extensions=records, mcpServers=servers, errors=errors)
        return out

    async def aclose(self) -> None:
        await self.mcp.aclose()


def _server(s: McpServerConfig) -> dict[str, Any]:
    out: dict[str, Any] = {"name": s.name, "transport": s.transport, "source": s.origin, "file": s.file}
    out["status"] = "not started"
    out["target"] = s.url if s.transport == "http" else " ".join([s.command, *s.args])
    return out
