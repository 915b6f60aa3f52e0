"""The run's event vocabulary: what every host (CLI, daemon, shims) sees, in order, for one AgentRun.

Each event is a frozen dataclass tagged by `type`; `event_to_dict` gives the wire form (camelCase keys).
A run's stream ends with exactly one `RunEnd`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal

from kgent.core.diagnostics import Diagnostic
from kgent.core.messages import AssistantMessage, message_to_dict

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
PlanStatus = Literal["pending", "in_progress", "completed"]
PlanPriority = Literal["high", "medium", "low"]
RunStatus = Literal["settled", "cancelled", "failed"]
PermissionOptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
InputSource = Literal["prompt", "steer", "follow_up"]
DecisionSource = Literal["host", "policy", "session_rule", "project_rule", "user_rule", "timeout"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStart:
    """The run began. A sub-agent's run (the `task` tool) names its parent run, the call that started it, and itself."""

    type: ClassVar[str] = "run_start"
    run_id: str
    session_id: str
    workspace: str
    mode: str
    provider: str
    model: str
    prompt: str
    parent_run_id: str | None = None
    parent_tool_call_id: str | None = None
    agent: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UserInput:
    """A user message entered the conversation: the prompt, a steering message or a follow-up."""

    type: ClassVar[str] = "user_message"
    text: str
    source: InputSource
    entry_id: str | None = None
    images: tuple[dict[str, Any], ...] | None = None  # the attached images' {mimeType, sha256, size, name?}


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageDelta:
    type: ClassVar[str] = "message_delta"
    kind: Literal["text", "thinking"]
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageEnd:
    """The authoritative assistant message of one model turn (already persisted)."""

    type: ClassVar[str] = "message_end"
    message: AssistantMessage
    entry_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallEvent:
    type: ClassVar[str] = "tool_call"
    tool_call_id: str
    name: str
    kind: ToolKind
    title: str
    args: dict[str, Any]
    path: str | None = None
    command: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUpdate:
    type: ClassVar[str] = "tool_update"
    tool_call_id: str
    status: Literal["pending", "in_progress", "completed", "failed"]
    output: str | None = None
    diff: str | None = None
    is_error: bool = False
    details: dict[str, Any] = field(default_factory=dict)
    # after an edit: the diagnostics it added (errors first); () none new; None when nothing was asked
    diagnostics: tuple[Diagnostic, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleText:
    """A rule an 'always' option creates: in the rule syntax, and in words."""

    rule: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionOption:
    """One answer a host may give; an 'always' option says how long it lasts (`scope`) and the rules it creates."""

    option_id: str
    kind: PermissionOptionKind
    name: str
    scope: Literal["session", "project", "user"] | None = None
    rules: tuple[RuleText, ...] = ()


DEFAULT_PERMISSION_OPTIONS: tuple[PermissionOption, ...] = (
    PermissionOption(option_id="allow_once", kind="allow_once", name="Allow once"),
    PermissionOption(option_id="allow_always", kind="allow_always", name="Allow for this session"),
    PermissionOption(option_id="reject_once", kind="reject_once", name="Reject"),
    PermissionOption(option_id="reject_always", kind="reject_always", name="Reject always"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangePreview:
    """What a write or edit would do: the unified diff, the text before (None: a new file) and after."""

    diff: str
    old_text: str | None
    new_text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionToolCall:
    """The call a permission request is about, in a form a person can judge."""

    tool_call_id: str
    name: str
    kind: ToolKind
    title: str
    args: dict[str, Any]
    path: str | None = None
    command: str | None = None
    preview: ChangePreview | None = None  # edit-kind calls


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRequest:
    """The host must decide this call; answer with `AgentRun.resolve_permission(request_id, option_id)`."""

    type: ClassVar[str] = "permission_request"
    request_id: str
    tool_call: PermissionToolCall
    risk: Literal["low", "medium", "high"]
    reason: str
    operation: str
    scope: str
    options: tuple[PermissionOption, ...] = DEFAULT_PERMISSION_OPTIONS
    agent: str | None = None  # the sub-agent asking (None: the run's own agent)
    no_rule: str | None = None  # why no 'always' option is offered (no rule can describe the call)


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionResolved:
    type: ClassVar[str] = "permission_resolved"
    request_id: str | None
    tool_call_id: str
    decision: PermissionOptionKind
    approved: bool
    source: DecisionSource
    reason: str = ""
    edited: bool | None = None  # True: the host approved its own version of the edit (no text here)
    label: str = (
        ""  # the decision in a person's words, as every front shows it ("allowed by the project rule …")
    )


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    """A host's answer to a `permission_request`: the option chosen and, for an edit-kind call approved with
    changes, the whole file the user wants instead of the proposal (`new_text`)."""

    option_id: str
    new_text: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueUpdate:
    type: ClassVar[str] = "queue_update"
    steering: tuple[str, ...]
    follow_up: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageEvent:
    """Tokens (and their estimated cost, when the model has a price) of one model call and of the run so far.
    `context`, after a model call: `{tokens, window, percent, text}`, what the model's context held then (the
    call's whole prompt and its answer) out of its context window; None for a sub-agent's run counted as one turn."""

    type: ClassVar[str] = "usage"
    turn: dict[str, Any]
    total: dict[str, Any]
    context: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryEvent:
    type: ClassVar[str] = "retry"
    attempt: int
    max_attempts: int
    delay_seconds: float
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionEvent:
    type: ClassVar[str] = "compaction"
    status: Literal["started", "completed", "failed"]
    trigger: Literal["automatic", "manual", "overflow"]
    entry_id: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanEntry:
    """One item of the agent's plan (the `todo_write` tool's list)."""

    content: str
    status: PlanStatus
    priority: PlanPriority = "medium"


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanEvent:
    """The agent's plan changed (or a resumed session's plan, re-announced): the whole list, which replaces the last."""

    type: ClassVar[str] = "plan"
    entries: tuple[PlanEntry, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedFile:
    """One instruction file (AGENTS.md, CLAUDE.md) the context loaded, re-read or dropped."""

    path: str  # absolute
    source: Literal["user", "project", "directory"]
    change: Literal["new", "changed", "removed"]
    truncated: bool = False  # only its first 32 KiB reached the model
    size: int = 0  # bytes on disk


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedFile:
    """An instruction file or a skill the files gate refused (a link to a secret or outside, several hard links):
    never read, never sent; `reason` says why."""

    path: str  # absolute
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class InstructionsEvent:
    """Instruction files entered the context (when the run opened, or a tool call touched their directory); each is
    recorded in the session entry `entry_id`. `skipped`: the files left out by the files gate."""

    type: ClassVar[str] = "instructions"
    files: tuple[LoadedFile, ...]
    entry_id: str | None = None
    skipped: tuple[SkippedFile, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """How a run ended: what `await run.result()` returns and what its `RunEnd` carries."""

    run_id: str
    session_id: str
    status: RunStatus
    stop_reason: str
    text: str
    error: dict[str, str] | None = None
    changed_paths: tuple[str, ...] = ()
    patch: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    turns: int = 0

    def to_event(self) -> RunEnd:
        return RunEnd(result=self)


@dataclass(frozen=True, slots=True)
class RunEnd:
    """The one terminal event of a run: its result. On the wire the result's fields sit in the event itself."""

    type: ClassVar[str] = "run_end"
    result: RunResult


@dataclass(frozen=True, slots=True, kw_only=True)
class BackgroundEvent:
    """A background command of the session (the bash tool's `background: true`) started or ended: its id, the
    command, `state` running / exited / stopped / failed, the exit code once it has one, the call that started it."""

    type: ClassVar[str] = "background"
    id: str
    command: str
    state: Literal["running", "exited", "stopped", "failed"]
    exit_code: int | None
    tool_call_id: str
    started_run_id: str
    output_bytes: int
    sandbox: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubRunEvent:
    """An event of a sub-agent's run (`run_id`, started by the `task` tool of `parent_run_id`), carried in the stream
    of the run whose consumer the host is: hosts show it as an event of that sub-run (the daemon sends it as an
    `agent/event` of `run_id` with `parentRunId`). A sub-run of a sub-run arrives flat, naming its own parent."""

    type: ClassVar[str] = "subrun"
    run_id: str
    parent_run_id: str
    event: Event


Event = (
    RunStart
    | UserInput
    | MessageDelta
    | MessageEnd
    | ToolCallEvent
    | ToolUpdate
    | PermissionRequest
    | PermissionResolved
    | QueueUpdate
    | UsageEvent
    | RetryEvent
    | CompactionEvent
    | PlanEvent
    | InstructionsEvent
    | BackgroundEvent
    | SubRunEvent
    | RunEnd
)

EVENT_TYPES: tuple[str, ...] = tuple(
    cls.type
    for cls in (
        RunStart,
        UserInput,
        MessageDelta,
        MessageEnd,
        ToolCallEvent,
        ToolUpdate,
        PermissionRequest,
        PermissionResolved,
        QueueUpdate,
        UsageEvent,
        RetryEvent,
        CompactionEvent,
        PlanEvent,
        InstructionsEvent,
        BackgroundEvent,
        RunEnd,
    )
)


def prompt_of(event: Event) -> PermissionRequest | None:
    """The permission prompt an event carries, the run's own or one of its sub-agents' (answer either through the
    run's `resolve_permission`), or None."""
    inner = event.event if isinstance(event, SubRunEvent) else event
    return inner if isinstance(inner, PermissionRequest) else None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_KEYS: dict[type, tuple[tuple[str, str], ...]] = {}


def _keys(cls: type) -> tuple[tuple[str, str], ...]:
    keys = _KEYS.get(cls)
    if keys is None:
        keys = _KEYS[cls] = tuple((f.name, _camel(f.name)) for f in fields(cls))
    return keys


def _tool_call(call: PermissionToolCall) -> dict[str, Any]:
    d: dict[str, Any] = {
        "toolCallId": call.tool_call_id,
        "name": call.name,
        "kind": call.kind,
        "title": call.title,
        "args": call.args,
    }
    if call.path is not None:
        d["path"] = call.path
    if call.command is not None:
        d["command"] = call.command
    if call.preview is not None:  # oldText is null for a new file
        d.update(diff=call.preview.diff, oldText=call.preview.old_text, newText=call.preview.new_text)
    return d


def _plain(value: Any) -> Any:
    if isinstance(value, AssistantMessage):
        return message_to_dict(value)  # the session's form of a message is its wire form
    if isinstance(value, PermissionToolCall):
        return _tool_call(value)
    if isinstance(value, Diagnostic):
        return value.to_dict()
    if isinstance(value, PermissionOption):
        option: dict[str, Any] = {"optionId": value.option_id, "kind": value.kind, "name": value.name}
        if value.scope is not None:
            option["scope"] = value.scope
        if value.rules:
            option["rules"] = [{"rule": r.rule, "text": r.text} for r in value.rules]
        return option
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {camel: _plain(getattr(value, name)) for name, camel in _keys(type(value))}
    return value


# run_end's wire keys: the result's fields but its runId (the envelope carries it), in this order.
_RUN_END_KEYS = tuple(
    (name, _camel(name))
    for name in (
        "status",
        "stop_reason",
        "text",
        "error",
        "changed_paths",
        "patch",
        "usage",
        "session_id",
        "turns",
    )
)


def wire_keys(cls: type) -> tuple[str, ...]:
    """The camelCase keys an event class may have on the wire (besides `type`)."""
    return tuple(camel for _, camel in (_RUN_END_KEYS if cls is RunEnd else _keys(cls)))


def event_to_dict(event: Event) -> dict[str, Any]:
    """The wire form: `{"type": ..., camelCaseField: value, ...}`; None-valued optional fields are omitted."""
    if isinstance(event, SubRunEvent):
        return {
            "type": event.type,
            "runId": event.run_id,
            "parentRunId": event.parent_run_id,
            "event": event_to_dict(event.event),
        }
    d: dict[str, Any] = {"type": event.type}
    source: Any = event
    keys = _keys(type(event))
    if isinstance(event, RunEnd):
        source, keys = event.result, _RUN_END_KEYS
    for name, camel in keys:
        value = getattr(source, name)
        if value is None:
            continue
        d[camel] = _plain(value)
    return d
