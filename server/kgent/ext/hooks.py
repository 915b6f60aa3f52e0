"""ExtensionHooks: the kernel's hooks seam (kgent.kernel.hooks.KernelHooks) filled from the registries.

Every hook's answer is checked when it is used (the right type, a known entry kind, data fitting its schema); a hook
that raises or answers wrongly becomes an ExtensionError naming the extension, which the kernel makes the error of
that one call. Hooks run in the order their extensions were loaded.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from kgent.core.errors import ExtensionError
from kgent.core.events import Event, RunResult
from kgent.core.messages import ToolCall, ToolResultMessage
from kgent.ext.registry import HookEntry, Registry
from kgent.ext.schema import check_value
from kgent.ext.tools import ExtensionTool
from kgent.kernel.hooks import ExtraEntry, HookContext
from kgent.providers.base import ProviderRequest
from kgent.tools.base import Tool

log = logging.getLogger("kgent.ext")


def _failed(hook: HookEntry, what: str) -> ExtensionError:
    return ExtensionError(f"extension {hook.extension!r}: its {hook.name} hook {what}")


async def _call(hook: HookEntry, *args: Any) -> Any:
    try:
        out = hook.fn(*args)
        if inspect.isawaitable(out):
            out = await out
    except ExtensionError:
        raise
    except Exception as exc:
        raise _failed(hook, f"failed: {type(exc).__name__}: {exc}") from exc
    return out


class ExtensionHooks:
    """KernelHooks over the registry of each run's workspace, plus the tools `more_tools` gives for a run (MCP
    servers)."""

    def __init__(
        self,
        registry_for: Callable[[Path], Registry],
        more_tools: Callable[[HookContext], Awaitable[Sequence[Tool]]] | None = None,
    ) -> None:
        self.registry_for = registry_for
        self.more_tools = more_tools

    def skill_dirs(self, ctx: HookContext) -> Sequence[Path]:
        return self.registry_for(ctx.workspace).all_skill_dirs()

    async def run_tools(self, ctx: HookContext) -> Sequence[Tool]:
        tools: list[Tool] = [ExtensionTool(e) for e in self.registry_for(ctx.workspace).all_tools()]
        if self.more_tools is not None:
            tools += await self.more_tools(ctx)
        return tools

    async def before_model_request(self, ctx: HookContext, request: ProviderRequest) -> ProviderRequest:
        for hook in self.registry_for(ctx.workspace).all_hooks("before_model_request"):
            out = await _call(hook, ctx, request)
            if out is None:
                continue
            if not isinstance(out, ProviderRequest):
                raise _failed(hook, f"returned a {type(out).__name__}, not a ProviderRequest or None")
            request = out
        return request

    async def before_tool_call(self, ctx: HookContext, call: ToolCall) -> str | None:
        for hook in self.registry_for(ctx.workspace).all_hooks("before_tool_call"):
            out = await _call(hook, ctx, call)
            if out is None:
                continue
            if not isinstance(out, str) or not out.strip():
                raise _failed(
                    hook, f"returned {out!r}: return None to let the call go on, or a reason to deny it"
                )
            return f"extension {hook.extension!r} denied this call: {out.strip()}"
        return None

    async def after_tool_call(
        self, ctx: HookContext, call: ToolCall, result: ToolResultMessage
    ) -> ToolResultMessage:
        for hook in self.registry_for(ctx.workspace).all_hooks("after_tool_call"):
            out = await _call(hook, ctx, call, result)
            if out is None:
                continue
            if not isinstance(out, ToolResultMessage) or out.tool_call_id != call.id:
                raise _failed(hook, "must return None or a ToolResultMessage for the same call")
            result = out
        return result

    def on_event(self, ctx: HookContext, event: Event) -> None:
        for hook in self.registry_for(ctx.workspace).all_hooks("on_event"):
            try:
                out = hook.fn(ctx, event)
            except Exception as exc:
                raise _failed(hook, f"failed: {type(exc).__name__}: {exc}") from exc
            if inspect.isawaitable(out):
                if inspect.iscoroutine(out):
                    out.close()
                raise _failed(hook, "returned an awaitable: on_event hooks must not be async")

    async def on_run_end(self, ctx: HookContext, result: RunResult) -> Sequence[ExtraEntry]:
        registry = self.registry_for(ctx.workspace)
        entries: list[ExtraEntry] = []
        for hook in registry.all_hooks("on_run_end"):
            try:  # one failing hook loses only its own entries
                out = await _call(hook, ctx, result)
                entries += _entries(hook, registry, out)
            except ExtensionError as exc:
                log.warning("%s", exc.message)
        return entries


def _entries(hook: HookEntry, registry: Registry, out: Any) -> list[ExtraEntry]:
    """An on_run_end hook's answer as entries: None, or ExtraEntry / (kind, data) items of registered kinds."""
    if out is None:
        return []
    if not isinstance(out, list | tuple):
        raise _failed(hook, "must return None or a list of entries")
    found: list[ExtraEntry] = []
    for item in out:
        entry = item if isinstance(item, ExtraEntry) else None
        if entry is None and isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], dict):
            entry = ExtraEntry(type=item[0], data=item[1])
        if entry is None:
            raise _failed(hook, f"returned {item!r}: an entry is ExtraEntry(type, data) or (type, data)")
        kind = registry.entry_kind(entry.type)
        if kind is None:
            raise _failed(hook, f"returned an entry of unregistered kind {entry.type!r}")
        problem = check_value(kind.schema, dict(entry.data))
        if problem:
            raise _failed(hook, f"returned a {entry.type!r} entry that does not fit its schema: {problem}")
        found.append(entry)
    return found
