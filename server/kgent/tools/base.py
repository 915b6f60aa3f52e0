"""The tool seam: what a tool declares (schema, kind, read-only), how it describes a call, and how it runs.

Contract: `Tool.run` never raises for an expected failure (bad path, missing file, non-zero exit): it returns a
`ToolOutput(is_error=True)`. Cancellation arrives as `asyncio.CancelledError`; a tool then stops its work (kills its
process group) and re-raises, leaving no half-written file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from kgent.core.events import Event, ToolKind
from kgent.files.ops import FileOps
from kgent.sandbox.bwrap import Grant, Sandbox

if TYPE_CHECKING:  # the manager's module builds on this one (it runs commands as the bash tool does)
    from kgent.tools.background import BackgroundCommands

Effect = Literal["read", "write", "execute", "network", "think"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolIntent:
    """What every call of a tool does, declared by the tool; the permission policy classifies calls from it.

    `effect`: read (touches nothing), write (changes the file at its path), execute (runs the shell command in
    `command_arg`), network (leaves the machine), think (pure computation). `path_arg` names the argument holding
    the file or directory the call touches; `default_path` is used when that argument is absent ("." = the
    workspace); `url_arg` the URL a network call reaches (its host is resolved: a private address asks separately). `verb` is how a reason reads: "reads", "searches", "edits".
    """

    effect: Effect
    path_arg: str | None = None
    url_arg: str | None = None
    default_path: str | None = None
    command_arg: str | None = None
    verb: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutput:
    """A tool's result. `details` carries structured extras: diff, exitCode, fullOutputPath, truncation (camelCase keys)."""

    content: str
    is_error: bool = False
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class CallDescription:
    """What a person needs to judge a call: a title, the workspace-relative (or absolute) path, the command."""

    title: str
    path: str | None = None
    command: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChangePreview:
    """The effect of a write or edit before it happens (for approval prompts and diff previews)."""

    path: str
    old_text: str | None
    new_text: str
    diff: str
    normalized: bool = False  # the texts are the file's without a BOM and with LF line endings


class PreviewError(Exception):
    """Raised by `Tool.preview` when the call would fail (the old text is not in the file, the path is a
    directory …): the message is the tool's error, which the model gets without anyone being asked to approve."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ChangeTracking(Protocol):
    """Records what a run changes in its workspace (kgent.changes.tracker.ChangeTracker is the git-backed one).

    `start` before the first tool call; tools that write call `record_before` for each file before changing it;
    `finish` returns the changed workspace-relative paths and a unified patch of the run's changes.
    """

    async def start(self) -> None: ...

    async def record_before(self, abs_path: Path, fs: FileOps) -> None: ...

    async def finish(self) -> tuple[tuple[str, ...], str]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SubTask:
    """What the `task` tool asks of a sub-agent: its prompt (its whole context), a name for people to see it by, the
    tools it gets (None: the runner's read-only default, or its definition's) and the name of the sub-agent definition
    it follows (None: none; kgent.context.agents)."""

    prompt: str
    agent: str
    tools: tuple[str, ...] | None = None
    definition: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubTaskResult:
    """How a sub-agent's run ended: `status` settled / cancelled / failed, its final text, the error when failed."""

    run_id: str
    status: str
    text: str
    error: str | None = None
    turns: int = 0


class SubAgentError(Exception):
    """A sub-agent could not be started (a limit, a tool it may not have); the message says why, for the model."""


class SubAgentRunner(Protocol):
    """Runs sub-agents for one tool call of a run (the kernel implements it and puts it in the call's ToolContext).

    `run` starts the sub-run, streams its events to the host as the parent's sub-run, and returns when it ends;
    cancelling the awaiting task cancels the sub-run (and waits for it to end). It raises SubAgentError, before
    starting anything, when a limit or the tool allowlist forbids the sub-agent."""

    def allowed_tools(self) -> tuple[str, ...]: ...

    def default_tools(self) -> tuple[str, ...]: ...

    async def run(self, task: SubTask) -> SubTaskResult: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandResult:
    """What a finished (or timed-out) shell command left: its output, tail-truncated for the model, the exit code
    (None when it timed out or died of a signal) and details (fullOutputPath, truncation, sandbox, terminalId)."""

    output: str
    exit_code: int | None
    timed_out: bool = False
    details: dict[str, Any] = field(default_factory=dict)


class CommandRunner(Protocol):
    """Where the bash tool runs a command: `kgent.tools.bash.LocalCommandRunner` (a local process group, inside the
    sandbox when the call has a grant) by default; a front may run it elsewhere (ACP: the client's terminal).

    `sandboxed` says whether the runner applies the call's sandbox grant. One that does not (`where` says where the
    command runs instead) makes the policy ask before every shell command, as when there is no sandbox at all.
    `run` stops the command after `limit` seconds (timed_out), raises OSError when the command cannot start, and on cancellation stops the command, then re-raises."""

    sandboxed: bool
    where: str

    async def run(self, command: str, ctx: ToolContext, limit: float) -> CommandResult: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """Per-call environment. `allow_outside` is True only when policy or the person approved leaving the workspace.

    `sandbox` and `grant`: where a shell command runs and what it may touch there; without them (full mode, or a
    caller running a tool directly) a command runs unconfined. `emit` sends an event into the run's stream."""

    workspace: Path
    fs: FileOps
    changes: ChangeTracking | None = None
    allow_outside: bool = False
    on_update: Callable[[str], None] | None = None
    bash_timeout: float = 120.0
    output_dir: Path | None = None
    sandbox: Sandbox | None = None
    grant: Grant | None = None
    runner: CommandRunner | None = None
    tool_call_id: str = ""  # unique in the run's tree: a sub-agent's calls are "<its run id>:<call id>"
    allow_private: bool = False
    emit: Callable[[Event], None] | None = None  # the run's event sink (todo_write's `plan`); None: no run
    subagents: SubAgentRunner | None = (
        None  # the `task` tool's way to start a sub-agent; None: none can start
    )
    background: BackgroundCommands | None = None  # the session's background commands; None: none can start
    run_id: str = ""  # the run the call belongs to (a sub-agent's own)


@runtime_checkable
class Tool(Protocol):
    name: str
    description: str
    parameters: dict[str, Any]
    kind: ToolKind
    read_only: bool  # True: may run in parallel with other read-only calls of the same batch
    intent: ToolIntent  # what a call does, for the permission policy

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription: ...

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        """What the call would change (None: nothing to show); raises PreviewError when the call would fail."""
        ...

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput: ...


def error_output(message: str, **details: Any) -> ToolOutput:
    """An error result."""
    return ToolOutput(content=message, is_error=True, details=details)
