"""What a run sends: the `agent/event` payloads (the dicts `kgent.core.events.event_to_dict` makes, one model per
kernel event) and the `agent/permission` request.

Events are not validated on their way out (they are the hot path, made from typed dataclasses); the e2e tests
validate every one they see against these models.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field
from typing_extensions import TypeAliasType

from kgent.service.wire.base import (
    Payload,
    PermissionOptionKind,
    RunStatus,
    ToolKind,
    ToolStatus,
    Usage,
)
from kgent.service.wire.results import AssistantMessage, LoadedFile

Risk = Literal["low", "medium", "high"]
Operation = Literal["read", "write", "shell", "network", "unknown"]
Scope = Literal["workspace", "outside"]
RunStopReason = Literal["end", "max_tokens", "cancelled", "error", "aborted", "max_turns", "cost_limit"]


class RuleItem(Payload):
    """A rule an 'always' option creates."""

    rule: str = Field(
        description="The rule in the rule syntax, e.g. `bash(npm test *)` (protocol.md, Rules)."
    )
    text: str = Field(
        description="The same in words, e.g. allow `npm test` with any arguments in this project."
    )


class PermissionOption(Payload):
    option_id: str = Field(
        description="allow_once, allow_always, allow_always_project, reject_once, reject_always or "
        "reject_always_project; a front renders whatever options arrive."
    )
    kind: PermissionOptionKind
    name: str = Field(
        description="A label for the button; an 'always' option says its rule and scope in words."
    )
    scope: Literal["session", "project", "user"] | None = Field(
        default=None, description="'Always' options: how long the answer lasts."
    )
    rules: list[RuleItem] | None = Field(
        default=None, description="'Always' options: the rule(s) the answer creates."
    )


class PermissionToolCall(Payload):
    """The call to decide, in a form a person can judge."""

    tool_call_id: str
    name: str
    kind: ToolKind
    title: str
    args: dict[str, Any]
    path: str | None = Field(
        default=None, description="The file it touches (workspace-relative or absolute)."
    )
    command: str | None = Field(default=None, description="The shell command.")
    diff: str | None = Field(default=None, description="Edits: a unified diff of the proposed change.")
    old_text: str | None = Field(default=None, description="Edits: the file before (null for a new file).")
    new_text: str | None = Field(default=None, description="Edits: the whole file after the change.")


class PermissionFields(Payload):
    request_id: str = Field(description="Unique per connection; also the agent/permission request's id.")
    tool_call: PermissionToolCall
    risk: Risk
    reason: str = Field(description="Why the daemon asks (one sentence).")
    operation: Operation
    scope: Scope
    options: list[PermissionOption]
    agent: str | None = Field(
        default=None, description="A sub-agent's prompt: its name (the `task` call's description)."
    )
    no_rule: str | None = Field(
        default=None,
        description="Why no 'always' option is offered: no rule can describe this call (one sentence, for the card).",
    )


# -- events ----------------------------------------------------------------------------------------------------------


class RunStartEvent(Payload):
    type: Literal["run_start"]
    run_id: str
    session_id: str
    workspace: str
    mode: str
    provider: str
    model: str
    prompt: str
    parent_run_id: str | None = Field(
        default=None, description="A sub-agent's run: the run whose `task` call started it."
    )
    parent_tool_call_id: str | None = Field(default=None, description="A sub-agent's run: that `task` call.")
    agent: str | None = Field(default=None, description="A sub-agent's run: its name.")


class ImageRef(Payload):
    """An image a user message carries, as sessions record it (the bytes are a blob beside the session file)."""

    mime_type: str
    sha256: str
    size: int
    name: str | None = None


class UserMessageEvent(Payload):
    type: Literal["user_message"]
    text: str
    source: Literal["prompt", "steer", "follow_up"]
    entry_id: str | None = Field(
        default=None,
        description="Its session entry: fork there (`agent/fork` to its parent) to edit and resend it.",
    )
    images: list[ImageRef] | None = Field(
        default=None, description="The images attached to it (absent: none); their bytes stay in the session."
    )


class MessageDeltaEvent(Payload):
    type: Literal["message_delta"]
    kind: Literal["text", "thinking"]
    delta: str = Field(description="The new text only (never cumulative).")


class MessageEndEvent(Payload):
    type: Literal["message_end"]
    message: AssistantMessage
    entry_id: str | None = Field(
        default=None, description="Its session entry (absent if the turn was not stored)."
    )


class ToolCallEvent(Payload):
    type: Literal["tool_call"]
    tool_call_id: str
    name: str
    kind: ToolKind
    title: str
    args: dict[str, Any]
    path: str | None = None
    command: str | None = None


class Diagnostic(Payload):
    """One finding of a language server (protocol.md § Diagnostics)."""

    path: str = Field(description="Workspace-relative when inside the workspace, else absolute.")
    line: int = Field(ge=1, description="1-based.")
    column: int = Field(ge=1, description="1-based.")
    severity: Literal["error", "warning", "information", "hint"]
    message: str
    source: str | None = Field(default=None, description="Who said it, e.g. `Ruff`, `Pylance`.")
    code: str | None = Field(default=None, description="The rule or error code, e.g. `F821`.")


class ToolUpdateEvent(Payload):
    type: Literal["tool_update"]
    tool_call_id: str
    status: ToolStatus
    output: str | None = Field(
        default=None,
        description="in_progress: a snapshot of the output so far; completed/failed: the result text.",
    )
    diff: str | None = None
    is_error: bool
    details: dict[str, Any] = Field(description="Structured extras the tool reports (informative).")
    diagnostics: list[Diagnostic] | None = Field(
        default=None,
        description="After an edit or write (or a command that changed a file the run has diagnostics of): the "
        "diagnostics it added (errors first, at most what the result "
        "lists); [] when it added none; absent when no source of diagnostics was asked.",
    )


class PermissionRequestEvent(PermissionFields):
    type: Literal["permission_request"]


class PermissionResolvedEvent(Payload):
    type: Literal["permission_resolved"]
    request_id: str | None = Field(default=None, description="Absent (null) when no prompt was shown.")
    tool_call_id: str
    decision: PermissionOptionKind
    approved: bool
    source: Literal["host", "policy", "session_rule", "project_rule", "user_rule", "timeout"]
    reason: str
    label: str = Field(
        description="The decision in a person's words, as every front shows it: 'allowed once', 'always allowed "
        "in this project', 'rejected by the plan mode', 'allowed by the project rule `bash(grep *)`', 'rejected: no "
        "answer in time'."
    )
    edited: bool | None = Field(
        default=None,
        description="true: the host approved the user's own version of the edit (answer's newText), which was "
        "written instead of the proposal. Absent otherwise.",
    )


class QueueUpdateEvent(Payload):
    type: Literal["queue_update"]
    steering: list[str]
    follow_up: list[str]


class ContextUse(Payload):
    tokens: int = Field(description="What the context held after the call: its whole prompt and its answer.")
    window: int = Field(
        description="The model's context window (KGENT_CONTEXT_WINDOW or the built-in table)."
    )
    percent: int = Field(description="tokens / window as a whole percent (half up): the gauge's figure.")
    text: str = Field(description='The gauge\'s text: "context 24k of 200k tokens (12%)".')


class UsageEvent(Payload):
    type: Literal["usage"]
    turn: Usage
    total: Usage
    context: ContextUse | None = Field(
        default=None, description="After a model call; absent for a sub-agent's run counted as one turn."
    )


class RetryEvent(Payload):
    type: Literal["retry"]
    attempt: int
    max_attempts: int
    delay_seconds: float
    error: str


class CompactionEvent(Payload):
    type: Literal["compaction"]
    status: Literal["started", "completed", "failed"]
    trigger: Literal["automatic", "manual", "overflow"]
    entry_id: str | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    error: str | None = None


class PlanEntry(Payload):
    content: str
    status: Literal["pending", "in_progress", "completed"]
    priority: Literal["high", "medium", "low"]


class PlanEvent(Payload):
    """The agent's plan (`todo_write`): the whole list, replacing the previous one."""

    type: Literal["plan"]
    entries: list[PlanEntry]


class SkippedFile(Payload):
    """An instruction file or skill the files gate refused: never read, never sent to the model."""

    path: str
    reason: str


class InstructionsEvent(Payload):
    """Instruction files entered the context: when the run opened, or when a tool call touched their directory;
    `skipped` names the instruction files and skills the files gate left out (a link to a secret or outside)."""

    type: Literal["instructions"]
    files: list[LoadedFile]
    entry_id: str | None = None
    skipped: list[SkippedFile] = Field(default_factory=list)


class BackgroundEvent(Payload):
    """A background command of the session (bash with `background: true`) started or ended; `agent/background`
    lists them and stops one."""

    type: Literal["background"]
    id: str = Field(
        description="The command's id in its session (bg1, bg2 …): what the model and agent/background use."
    )
    command: str
    state: Literal["running", "exited", "stopped", "failed"] = Field(
        description="running; exited (its program ended, exitCode says how); stopped (bash_stop, agent/background, "
        "the run's end); failed (killed by a signal)."
    )
    exit_code: int | None = None
    tool_call_id: str = Field(description="The bash call that started it.")
    started_run_id: str = Field(description="The run whose call started it.")
    output_bytes: int = Field(description="Bytes of output so far.")
    sandbox: str | None = Field(
        default=None, description="What it runs with, when it runs inside the sandbox."
    )


class RunError(Payload):
    code: str
    message: str


class RunEndEvent(Payload):
    """The run's terminal event: exactly one, always last."""

    type: Literal["run_end"]
    status: RunStatus
    stop_reason: RunStopReason
    text: str = Field(description="The final assistant text.")
    error: RunError | None = None
    changed_paths: list[str] = Field(
        description="Workspace-relative paths the run created, changed or deleted."
    )
    patch: str = Field(description="A unified diff of the run's workspace changes; empty if none.")
    usage: Usage
    session_id: str
    turns: int


EVENTS: tuple[type[Payload], ...] = (
    RunStartEvent,
    UserMessageEvent,
    MessageDeltaEvent,
    MessageEndEvent,
    ToolCallEvent,
    ToolUpdateEvent,
    PermissionRequestEvent,
    PermissionResolvedEvent,
    QueueUpdateEvent,
    UsageEvent,
    RetryEvent,
    CompactionEvent,
    PlanEvent,
    InstructionsEvent,
    BackgroundEvent,
    RunEndEvent,
)

KnownEvent = TypeAliasType(
    "KnownEvent",
    Annotated[
        RunStartEvent
        | UserMessageEvent
        | MessageDeltaEvent
        | MessageEndEvent
        | ToolCallEvent
        | ToolUpdateEvent
        | PermissionRequestEvent
        | PermissionResolvedEvent
        | QueueUpdateEvent
        | UsageEvent
        | RetryEvent
        | CompactionEvent
        | PlanEvent
        | InstructionsEvent
        | BackgroundEvent
        | RunEndEvent,
        Field(discriminator="type"),
    ],
)


class AgentEventParams(Payload):
    """`agent/event`: one event of one run."""

    run_id: str
    session_id: str
    parent_run_id: str | None = Field(
        default=None, description="Present on every event of a sub-agent's run: the run that started it."
    )
    seq: int = Field(description="0, 1, 2, … per run, without gaps.")
    event: KnownEvent


class PermissionParams(PermissionFields):
    """`agent/permission`: decide one tool call (the permission_request event's fields, plus the run asking)."""

    run_id: str
    session_id: str
    parent_run_id: str | None = Field(
        default=None, description="A sub-agent's prompt: the run that started it."
    )
