"""The kernel's hooks seam: tools an outer layer adds to a run, and hooks that see or change its requests, tool
calls, results, events and end. The kernel imports no extension code; kgent.ext fills this in (NoHooks is empty).

Contract: any method may raise. The kernel turns a failure into the error of the one call it belongs to (a tool
call's error result, a failed model turn) and never lets it out of the loop; an ExtensionError's message names the
extension, anything else is reported as a failing hook. `before_tool_call` can only deny: approving stays the host's.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from kgent.core.errors import ExtensionError
from kgent.core.events import Event, RunResult
from kgent.core.messages import AssistantMessage, ToolCall, ToolResultMessage
from kgent.providers.base import ProviderRequest
from kgent.tools.base import Tool

log = logging.getLogger("kgent.kernel")


@dataclass(frozen=True, slots=True, kw_only=True)
class HookContext:
    """Which run a hook is called for."""

    run_id: str
    session_id: str
    workspace: Path
    mode: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtraEntry:
    """A session entry of an extension's kind, appended when a run ends (`on_run_end`)."""

    type: str
    data: Mapping[str, Any]


class KernelHooks(Protocol):
    async def run_tools(self, ctx: HookContext) -> Sequence[Tool]:
        """Tools to offer this run besides the kernel's own (a name the kernel has already is skipped)."""
        ...

    async def before_model_request(self, ctx: HookContext, request: ProviderRequest) -> ProviderRequest: ...

    async def before_tool_call(self, ctx: HookContext, call: ToolCall) -> str | None:
        """None lets the call go on to the permission check; a string denies it (the reason, naming who)."""
        ...

    async def after_tool_call(
        self, ctx: HookContext, call: ToolCall, result: ToolResultMessage
    ) -> ToolResultMessage: ...

    def on_event(self, ctx: HookContext, event: Event) -> None: ...

    async def on_run_end(self, ctx: HookContext, result: RunResult) -> Sequence[ExtraEntry]: ...

    def skill_dirs(self, ctx: HookContext) -> Sequence[Path]:
        """Folders of skills (kgent.context.skills) to offer this run besides the project's and the user's."""
        ...


class NoHooks:
    """The seam when nothing is plugged in."""

    async def run_tools(self, ctx: HookContext) -> Sequence[Tool]:
        return ()

    async def before_model_request(self, ctx: HookContext, request: ProviderRequest) -> ProviderRequest:
        return request

    async def before_tool_call(self, ctx: HookContext, call: ToolCall) -> str | None:
        return None

    async def after_tool_call(
        self, ctx: HookContext, call: ToolCall, result: ToolResultMessage
    ) -> ToolResultMessage:
        return result

    def on_event(self, ctx: HookContext, event: Event) -> None:
        return None

    async def on_run_end(self, ctx: HookContext, result: RunResult) -> Sequence[ExtraEntry]:
        return ()

    def skill_dirs(self, ctx: HookContext) -> Sequence[Path]:
        return ()


def failure(exc: Exception, hook: str) -> str:
    """What a failing hook reports: an ExtensionError's own message (it names the extension), else the hook."""
    if isinstance(exc, ExtensionError):
        return exc.message
    return f"a {hook} hook failed: {type(exc).__name__}: {exc}"


async def hooked_request(
    hooks: KernelHooks, ctx: HookContext, request: ProviderRequest
) -> ProviderRequest | AssistantMessage:
    """The request after `before_model_request`, or the failed turn a failing hook makes of it."""
    try:
        return await hooks.before_model_request(ctx, request)
    except Exception as exc:
        return AssistantMessage(
            stop_reason="error", error=failure(exc, "before_model_request"), error_code="hook_error"
        )


async def denial(hooks: KernelHooks, ctx: HookContext, call: ToolCall) -> str | None:
    """The error text of a call a `before_tool_call` hook denied or failed on; None when it may go on."""
    try:
        reason = await hooks.before_tool_call(ctx, call)
    except Exception as exc:
        return f"hook_error: {failure(exc, 'before_tool_call')}"
    return None if reason is None else f"permission_denied: {reason}"


async def hooked_result(
    hooks: KernelHooks, ctx: HookContext, call: ToolCall, result: ToolResultMessage
) -> ToolResultMessage:
    """The result after `after_tool_call`; a failing hook makes it an error result saying so."""
    try:
        return await hooks.after_tool_call(ctx, call, result)
    except Exception as exc:
        text = f"hook_error: {failure(exc, 'after_tool_call')}"
        return ToolResultMessage(tool_call_id=call.id, name=call.name, content=text, is_error=True)


def observer(hooks: KernelHooks, ctx: HookContext) -> Any:
    """An AgentRun event observer calling `on_event`; a failing hook is logged (a warning naming it), the event
    still goes out."""

    def observe(event: Event) -> None:
        try:
            hooks.on_event(ctx, event)
        except Exception as exc:
            log.warning("%s", failure(exc, "on_event"))

    return observe


async def run_end_entries(hooks: KernelHooks, ctx: HookContext, result: RunResult) -> Sequence[ExtraEntry]:
    """The entries `on_run_end` hooks add; a failing hook is logged as a warning naming it (the run has ended)."""
    try:
        return await hooks.on_run_end(ctx, result)
    except Exception as exc:
        log.warning("%s", failure(exc, "on_run_end"))
        return ()


def extension_skill_dirs(hooks: KernelHooks, ctx: HookContext) -> Sequence[Path]:
    """The skill folders the hooks offer this run; a failing hook is logged (the run goes on without them)."""
    try:
        return hooks.skill_dirs(ctx)
    except Exception as exc:
        log.warning("%s", failure(exc, "skill_dirs"))
        return ()
