"""What the daemon answers: the result of every request, and the session shapes (entries, messages) they carry."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field
from typing_extensions import TypeAliasType

from kgent.service.wire.base import (
    OpenPayload,
    Payload,
    PermissionMode,
    PermissionOptionKind,
    StopReason,
    Tokens,
    ToolKind,
    Usage,
)

# -- initialize ----------------------------------------------------------------------------------------------------


class ServerInfo(Payload):
    name: str
    version: str


class ToolInfo(Payload):
    name: str
    kind: ToolKind
    read_only: bool


class SessionFeatures(Payload):
    persistent: bool = Field(description="False: sessions live only as long as the process.")
    fork: bool
    compact: bool


class ServerFeatures(Payload):
    steer: bool
    follow_up: bool
    concurrent_runs: bool
    sessions: SessionFeatures
    prompt_content: list[str] = Field(description="The content block types a prompt may hold.")
    permission_option_kinds: list[PermissionOptionKind]
    approval_timeout: float | None = Field(description="Seconds an approval may take; null: no limit.")
    host_files: bool = Field(description="It asks a client that offers capabilities.fs for its open buffers.")
    review: bool = Field(description="It serves agent/review and agent/applyReview.")


class ExtensionInfo(Payload):
    name: str
    source: Literal["entry point", "user", "project"]
    target: str = Field(description="What was loaded: `module:attr`, a module or a file.")
    status: Literal["loaded", "failed", "untrusted", "disabled"]
    version: str
    registered: list[str] = Field(description="`tool:NAME`, `provider:NAME`, `entry_kind:NAME`, `hook:NAME`.")
    error: str | None = Field(default=None, description="Why it failed to load (names the extension).")


class McpServerInfo(Payload):
    name: str
    transport: Literal["stdio", "http"]
    source: Literal["user", "project"]
    file: str = Field(description="The config file that names the server.")
    target: str = Field(description="The command line or the URL.")
    status: Literal["not started", "running", "stopped", "failed", "untrusted"]
    tools: list[str] | None = Field(default=None, description="The server's tools once it has started.")
    error: str | None = None


class ProjectTrust(Payload):
    root: str
    trusted: bool
    needs_trust: bool = Field(description="Whether the project's own files name code to run.")


class ExtensionsInfo(Payload):
    api_version: str = Field(description="The extension API's version (kgent.ext.API_VERSION).")
    project: ProjectTrust | None = Field(
        description="The daemon's working directory as a project; null: none."
    )
    extensions: list[ExtensionInfo]
    mcp_servers: list[McpServerInfo]
    errors: list[str] = Field(description="Config files that could not be read.")


class ServerCapabilities(Payload):
    modes: list[PermissionMode]
    mode_descriptions: dict[str, str] = Field(
        description="What each mode lets run unasked, asks or refuses, in words for people (every front shows these)."
    )
    default_mode: str
    providers: list[str]
    default_provider: str
    models: dict[str, list[str]] = Field(
        description="Known model ids per provider (any id the provider takes works)."
    )
    default_model: str
    tools: list[ToolInfo]
    events: list[str] = Field(description="The event types this daemon may send.")
    sandbox: Literal["bwrap", "none"] = Field(
        description="What shell commands run in: bubblewrap (read-only commands run unasked inside it), or none "
        "(every shell command asks)."
    )
    sandbox_reason: str = Field(description="Why, for people (e.g. why there is no sandbox).")
    permission_new_text: bool = Field(
        description="The answer to agent/permission may carry newText (approve an edit or write with changes)."
    )
    features: ServerFeatures
    extensions: ExtensionsInfo = Field(
        description="What extensions and MCP servers are configured and loaded."
    )


class InitializeResult(Payload):
    server_info: ServerInfo
    protocol_version: int = Field(description="The version spoken on this connection.")
    capabilities: ServerCapabilities


# -- runs ------------------------------------------------------------------------------------------------------------


class RunResult(Payload):
    run_id: str
    session_id: str = Field(description="The run's session (a new one when the request named none).")


class CancelResult(Payload):
    cancelled: bool = Field(description="False if the run had already ended.")


class EmptyResult(Payload):
    """`{}`."""


class BackgroundCommand(Payload):
    """One background command of a session, as the `background` event describes it."""

    id: str
    command: str
    state: Literal["running", "exited", "stopped", "failed"]
    exit_code: int | None = None
    tool_call_id: str
    started_run_id: str
    output_bytes: int
    sandbox: str | None = None
    started: float = Field(description="When it started (epoch seconds).")


class BackgroundResult(Payload):
    commands: list[BackgroundCommand] = Field(
        description="Oldest first; ended ones too while the session's run lasts (or a cancel kept some running)."
    )


# -- sessions --------------------------------------------------------------------------------------------------------


class SessionInfo(Payload):
    session_id: str
    workspace: str
    created: str = Field(description="ISO 8601, UTC.")
    updated: str = Field(description="ISO 8601, UTC.")
    title: str = Field(description="The first line of the first prompt.")
    entry_count: int
    leaf_id: str | None
    live_run_id: str | None


class SessionsResult(Payload):
    sessions: list[SessionInfo] = Field(description="Most recently updated first.")


class ToolOutputResult(Payload):
    text: str = Field(
        description="All a tool call printed, as saved with the session (redacted as the session is): a command's "
        "whole output, not the tail the model was shown."
    )
    truncated: bool = Field(
        description="Not all of it: past 4 MiB only the first and last 2 MiB were kept (a line in the text says "
        "how much was dropped), or the saved output is gone and `text` is what the model was shown."
    )


# -- rules ----------------------------------------------------------------------------------------------------------


class RuleInfo(Payload):
    rule: str = Field(description="In the rule syntax, e.g. `bash(npm test *)`.")
    decision: Literal["allow", "deny"]
    scope: Literal["session", "project", "user"]
    session_id: str | None = Field(default=None, description="Scope `session`: the session it belongs to.")
    text: str = Field(description="The rule in words.")
    file: str | None = Field(default=None, description="Scopes `project` and `user`: the file it is in.")


class RuleFilesInfo(Payload):
    project: str = Field(description="The project's rule file (`<workspace>/.kgent/config.toml`).")
    user: str = Field(description="The user's rule file (`<user config dir>/config.toml`).")
    personal: str = Field(
        description="The user's own rule file for this project (`<user config dir>/projects/<name>-<hash>.toml`): "
        "where project rules are written while the project is not trusted; its rules count either way."
    )


class RulesResult(Payload):
    rules: list[RuleInfo] = Field(
        description="Deny rules first, then allows; the user's, the project's, the sessions'."
    )
    files: RuleFilesInfo
    project_trusted: bool = Field(
        description="False: the allow rules in the project's own file are ignored (its denies still count), and "
        "new project rules go to the user's own file for it (`files.personal`)."
    )
    problems: list[str] | None = Field(
        default=None, description="Rules in the files that could not be read (file and rule), left out."
    )


class AddRuleResult(Payload):
    rule: RuleInfo


class RemoveRuleResult(Payload):
    removed: bool = Field(description="False if there was no such rule.")


class ToolCallRef(OpenPayload):
    id: str
    name: str
    arguments: dict[str, Any]
    arguments_error: str | None = None


class SessionImage(OpenPayload):
    """An image of a user message: its blob's sha256 (the bytes stay beside the session file), type and size."""

    mime_type: str
    sha256: str
    size: int
    name: str | None = None


class UserMessage(OpenPayload):
    role: Literal["user"]
    text: str
    images: list[SessionImage] | None = None


class AssistantMessage(OpenPayload):
    """One model turn, as stored in the session."""

    role: Literal["assistant"]
    text: str
    stop_reason: StopReason
    thinking: str | None = None
    tool_calls: list[ToolCallRef] | None = None
    usage: Tokens | None = None
    error: str | None = None
    error_code: str | None = None
    provider: str | None = None
    model: str | None = None


class ToolResultMessage(OpenPayload):
    role: Literal["tool"]
    tool_call_id: str
    name: str
    content: str
    is_error: bool
    details: dict[str, Any] | None = None


class SummaryMessage(OpenPayload):
    role: Literal["summary"]
    text: str


SessionMessage = TypeAliasType(
    "SessionMessage",
    Annotated[
        UserMessage | AssistantMessage | ToolResultMessage | SummaryMessage, Field(discriminator="role")
    ],
)


class SessionEntry(OpenPayload):
    """One entry of a session's tree; its other fields depend on `type` (config, message, permission, compaction,
    label, …: ignore the types you do not know)."""

    id: str
    parent_id: str | None
    type: str
    timestamp: str
    message: SessionMessage | None = None


class LoadedFile(Payload):
    path: str = Field(description="Absolute path of the AGENTS.md (or CLAUDE.md).")
    source: Literal["user", "project", "directory"]
    change: Literal["new", "changed", "removed"]
    truncated: bool = Field(default=False, description="Only its first 32 KiB reached the model.")
    size: int = Field(default=0, description="Bytes on disk.")


class SkillInfo(Payload):
    name: str
    description: str
    path: str = Field(description="The skill's SKILL.md, absolute.")


class SessionResult(Payload):
    session_id: str
    workspace: str
    title: str
    created: str
    leaf_id: str | None = Field(description="The active leaf; null for an empty session.")
    branch: list[str] = Field(description="Entry ids from the root to leafId.")
    entries: list[SessionEntry] = Field(description="In append order; the tree is given by parentId.")
    labels: dict[str, str]
    warnings: list[str] = Field(description="What loading had to repair (e.g. a torn last line).")
    live_run_id: str | None
    usage: Usage = Field(description="Totals over every model turn stored in the session, on every branch.")
    instructions: list[LoadedFile] = Field(
        default_factory=list,
        description="The instruction files the active branch's context holds (general → specific).",
    )
    skills: list[SkillInfo] = Field(default_factory=list, description="The skills last listed to the model.")


class ForkResult(Payload):
    session_id: str
    leaf_id: str


class CompactResult(Payload):
    compacted: bool = Field(description="False (and entryId null) when there was too little history.")
    entry_id: str | None
    tokens_before: int | None
    tokens_after: int | None
