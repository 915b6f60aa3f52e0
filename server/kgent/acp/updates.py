"""Kgent's events and session history as ACP `session/update`s, and a run's result as an ACP stop reason."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, get_args

from acp import helpers as H
from acp import schema as S

from kgent.core.events import (
    PermissionRequest,
    PlanEvent,
    RunEnd,
    RunResult,
    RunStart,
    SubRunEvent,
    ToolCallEvent,
    ToolUpdate,
)
from kgent.core.messages import (
    AssistantMessage,
    Message,
    SummaryMessage,
    ToolResultMessage,
    UserMessage,
    message_to_dict,
)
from kgent.files.ops import LocalFileOps
from kgent.tools.base import Tool, ToolContext
from kgent.tools.todo import TodoWriteTool, latest_plan

_KINDS = frozenset(get_args(S.ToolKind))
# the kernel's stop reasons of a settled run → ACP's
STOP_REASONS: dict[str, S.StopReason] = {"end": "end_turn", "max_tokens": "max_tokens"}


def stop_reason(result: RunResult) -> S.StopReason | None:
    """The ACP stop reason of a run's result, or None for a failure (the prompt answers a JSON-RPC error). The turn
    limit and a model's refusal end a run `failed` in the kernel but are stop reasons in ACP."""
    if result.status == "cancelled":
        return "cancelled"
    if result.stop_reason == "max_turns":
        return "max_turn_requests"
    if (result.error or {}).get("code") == "content_filter":
        return "refusal"
    if result.status == "failed":
        return None
    return STOP_REASONS.get(result.stop_reason, "end_turn")


def acp_kind(kind: str) -> S.ToolKind:
    return kind if kind in _KINDS else "other"  # type: ignore[return-value]


def locations(path: str | None, workspace: str, args: dict[str, Any]) -> list[S.ToolCallLocation] | None:
    """Where a call acts (absolute path, 1-based line if the call names one), so editors can follow along."""
    if not path:
        return None
    absolute = str(Path(workspace, path))
    line = args.get("line") or args.get("offset")
    return [S.ToolCallLocation(path=absolute, line=line if isinstance(line, int) and line > 0 else None)]


def tool_call_start(event: ToolCallEvent, workspace: str) -> S.ToolCallStart:
    return H.start_tool_call(
        event.tool_call_id,
        event.title,
        kind=acp_kind(event.kind),
        status="pending",
        locations=locations(event.path, workspace, event.args),
        raw_input=event.args,
    )


CANCELLED = "cancelled:"  # how the kernel's result of a call a cancel cut short begins


def cancelled(event: ToolUpdate) -> bool:
    """Whether the call ended because its run was cancelled (ACP has no such status: it ends `failed`)."""
    return event.status == "failed" and (event.output or "").startswith(CANCELLED)


def tool_call_update(
    event: ToolUpdate,
    diff: S.FileEditToolCallContent | None,
    terminal: str | None = None,
    title: str | None = None,
) -> S.ToolCallProgress:
    """Progress or the end of a call: a finished edit carries its diff, a command (or any tool) its output — or,
    when the command ran in the client's terminal, that terminal (the client shows its output) and the output as
    `rawOutput`. A call a cancel cut short ends `failed` (ACP has no `cancelled`), its title (the one it was
    announced with) ending "· cancelled", so the client's line says so."""
    update = _tool_call_update(event, diff, terminal)
    if title is not None and cancelled(event):
        return update.model_copy(
            update={"title": f"{title} · cancelled", "field_meta": {"kgent": {"cancelled": True}}}
        )
    return update


def _tool_call_update(
    event: ToolUpdate, diff: S.FileEditToolCallContent | None, terminal: str | None
) -> S.ToolCallProgress:
    content: list[Any] = []
    if diff is not None:
        content.append(diff)
    if terminal is not None:
        content.append(H.tool_terminal_ref(terminal))
        raw = {"output": event.output} if event.output else None
        return H.update_tool_call(event.tool_call_id, status=event.status, content=content, raw_output=raw)
    if event.output:
        content.append(H.tool_content(H.text_block(event.output)))
    return H.update_tool_call(event.tool_call_id, status=event.status, content=content or None)


def sub_agent_event(
    wrapped: SubRunEvent, agents: dict[str, str]
) -> ToolCallEvent | ToolUpdate | PermissionRequest | None:
    """A sub-agent's call, update or prompt as one of the turn's own: its id prefixed with the sub-run's (ids are
    unique per run only), its title with the sub-agent's name. None for what ACP shows no other way (its text, its
    start and end: the `task` call's result carries its answer). `agents` tracks the names of live sub-runs."""
    event, run_id = wrapped.event, wrapped.run_id
    if isinstance(event, RunStart):
        agents[run_id] = event.agent or "sub-agent"
        return None
    if isinstance(event, RunEnd):
        agents.pop(run_id, None)
        return None
    name = agents.get(run_id, "sub-agent")
    if isinstance(event, ToolCallEvent):
        return replace(event, tool_call_id=f"{run_id}:{event.tool_call_id}", title=f"{name}: {event.title}")
    if isinstance(event, ToolUpdate):
        return replace(event, tool_call_id=f"{run_id}:{event.tool_call_id}")
    if isinstance(event, PermissionRequest):
        call = event.tool_call
        relabelled = replace(
            call, tool_call_id=f"{run_id}:{call.tool_call_id}", title=f"{name}: {call.title}"
        )
        return replace(event, tool_call=relabelled)
    return None


def usage_update(context: Mapping[str, int], cost: float | None) -> S.UsageUpdate:
    """ACP's `usage_update`: how full the context is (`used` of `size` tokens) and what the session has cost so
    far, when every turn of it has a price."""
    return S.UsageUpdate(
        session_update="usage_update",
        used=max(0, int(context["tokens"])),
        size=max(0, int(context["window"])),
        cost=None if cost is None else S.Cost(amount=round(cost, 6), currency="USD"),
    )


def wire_cost(usage: Mapping[str, Any]) -> float | None:
    """The amount of a usage object's `cost` (kgent.kernel.cost.usage_to_wire), None when it has none."""
    cost = usage.get("cost")
    return float(cost["amount"]) if isinstance(cost, Mapping) else None


def prompt_usage(usage: Mapping[str, Any]) -> S.Usage | None:
    """A run's total usage as `session/prompt`'s `usage` (all input, cached or not, in `inputTokens`)."""
    if not usage:
        return None
    cached_read, cached_write = int(usage.get("cacheReadTokens", 0)), int(usage.get("cacheWriteTokens", 0))
    inputs = int(usage.get("inputTokens", 0)) + cached_read + cached_write
    output = int(usage.get("outputTokens", 0))
    return S.Usage(
        total_tokens=inputs + output,
        input_tokens=inputs,
        output_tokens=output,
        cached_read_tokens=cached_read,
        cached_write_tokens=cached_write,
    )


def plan_update(event: PlanEvent) -> S.AgentPlanUpdate:
    """The agent's whole plan, as ACP's `plan` update (which also replaces the previous one)."""
    return H.update_plan(H.plan_entry(e.content, priority=e.priority, status=e.status) for e in event.entries)


def live_output(tool_call_id: str, output: str) -> S.ToolCallProgress:
    """A running command's output so far (it replaces the call's content shown before)."""
    return H.update_tool_call(
        tool_call_id, status="in_progress", content=[H.tool_content(H.text_block(output))]
    )


def terminal_attached(tool_call_id: str, terminal_id: str) -> S.ToolCallProgress:
    """The call's command runs in this terminal of the client: it shows the output live."""
    return H.update_tool_call(tool_call_id, status="in_progress", content=[H.tool_terminal_ref(terminal_id)])


def permission_tool_call(event: PermissionRequest, workspace: str) -> S.ToolCallUpdate:
    """The call a permission request is about, as ACP's `toolCall` (it was announced by `tool_call` before), with
    what a person needs to judge it as content: an edit's or write's `diff` (absolute path, the whole file before and
    after), a shell command's text — so nobody approves blind."""
    call = event.tool_call
    content: list[Any] = []
    if call.preview is not None and call.path:
        where = str(Path(workspace, call.path))
        content.append(H.tool_diff_content(where, call.preview.new_text, call.preview.old_text))
    if call.command:
        content.append(H.tool_content(H.text_block(call.command)))
    return S.ToolCallUpdate(
        tool_call_id=call.tool_call_id,
        title=call.title or event.reason or event.operation,
        kind=acp_kind(call.kind),
        status="pending",
        content=content or None,
        locations=locations(call.path, workspace, call.args),
        raw_input=call.args,
    )


def prompt_text(blocks: Iterable[Any]) -> str:
    """The prompt as the model reads it: text as is, a resource link as its URI, an embedded resource fenced."""
    parts: list[str] = []
    for block in blocks:
        match block:
            case S.TextContentBlock(text=text):
                parts.append(text)
            case S.ResourceContentBlock(uri=uri, name=name):
                parts.append(f"[{name}]({uri})" if name else uri)
            case S.EmbeddedResourceContentBlock(resource=S.TextResourceContents(uri=uri, text=text)):
                parts.append(f"<context uri={uri!r}>\n{text}\n</context>")
            case S.EmbeddedResourceContentBlock(resource=resource):
                parts.append(f"(binary resource {resource.uri})")
            case S.ImageContentBlock():
                pass  # sent beside the text (prompt_blocks)
            case _:
                parts.append(f"({getattr(block, 'type', 'unknown')} content is not supported)")
    return "\n\n".join(p for p in parts if p)


def prompt_blocks(blocks: Iterable[Any]) -> str | list[dict[str, Any]]:
    """The prompt as agent/run's `prompt`: its text, and its images as `image` blocks (checked there)."""
    blocks = list(blocks)
    text = prompt_text(blocks)
    images = [
        {"type": "image", "data": b.data, "mimeType": b.mime_type, **({"uri": b.uri} if b.uri else {})}
        for b in blocks
        if isinstance(b, S.ImageContentBlock)
    ]
    if not images:
        return text
    return ([{"type": "text", "text": text}] if text else []) + images


def replay(
    messages: Iterable[Message],
    tools: Mapping[str, Tool],
    workspace: str,
) -> Iterator[Any]:
    """A session's active branch as the updates a client would have seen live (session/load): tool calls with the
    titles, kinds and locations their tools gave them live, and the user's images (their bytes filled in by the caller;
    an image whose bytes are gone is replayed as a line saying so)."""
    ctx = ToolContext(workspace=Path(workspace), fs=LocalFileOps())
    for message in messages:
        match message:
            case UserMessage(text=text, images=images):
                if text:
                    yield H.update_user_message_text(text)
                for image in images:
                    if image.data:
                        yield H.update_user_message(
                            H.image_block(base64.b64encode(image.data).decode("ascii"), image.mime_type)
                        )
                    else:
                        yield H.update_user_message_text(f"[an image ({image.mime_type}) no longer stored]")
            case SummaryMessage(text=text):
                yield H.update_user_message_text(text)
            case AssistantMessage():
                if message.thinking:
                    yield H.update_agent_thought_text(message.thinking)
                if message.text:
                    yield H.update_agent_message_text(message.text)
                for call in message.tool_calls:
                    tool = tools.get(call.name)
                    desc = tool.describe(call.arguments, ctx) if tool is not None else None
                    yield H.start_tool_call(
                        call.id,
                        desc.title if desc is not None else call.name,
                        kind=acp_kind(str(tool.kind) if tool is not None else "other"),
                        status="pending",
                        locations=locations(
                            desc.path if desc is not None else None, workspace, call.arguments
                        ),
                        raw_input=call.arguments,
                    )
            case ToolResultMessage():
                yield H.update_tool_call(
                    message.tool_call_id,
                    status="failed" if message.is_error else "completed",
                    content=[H.tool_content(H.text_block(message.content))] if message.content else None,
                )
                if message.name == TodoWriteTool.name and not message.is_error:
                    plan = latest_plan([message_to_dict(message)])
                    if plan is not None:
                        yield plan_update(PlanEvent(entries=plan))
