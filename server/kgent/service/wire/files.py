"""Wire models of host-owned files and review (protocol.md § Host-owned files, § Review): what the client offers in
`initialize`, the daemon → client file requests and their answers, and `agent/review` / `agent/applyReview`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError
from typing_extensions import TypeAliasType

from kgent.service.wire.base import NonEmptyStr, Params, Payload

# -- initialize: what the client serves ------------------------------------------------------------------------------


class FsCapabilities(Params):
    """The files a client serves from its open buffers (named after ACP's `fs/read_text_file` / `fs/write_text_file`)."""

    read_text_file: bool = Field(default=False, description="It answers agent/readTextFile.")
    write_text_file: bool = Field(default=False, description="It answers agent/writeTextFile.")
    save_files: bool = Field(default=False, description="It answers agent/saveFiles.")


class ClientCapabilities(Params):
    fs: FsCapabilities | None = None
    diagnostics: bool = Field(
        default=False,
        description="It answers agent/diagnostics with its language servers' findings (protocol.md § Diagnostics).",
    )


# -- daemon → client requests, and the answers -----------------------------------------------------------------------


class FileRequestBase(Payload):
    run_id: str | None = Field(
        default=None,
        description="The run that needs the file; absent for agent/applyReview's reads and writes.",
    )
    session_id: str
    path: str = Field(description="Absolute path (of the daemon's machine).")


class ReadTextFileParams(FileRequestBase):
    """`agent/readTextFile`: the text of a file the client has open (unsaved edits included)."""


class ReadTextFileResult(Params):
    content: str | None = Field(
        description="The buffer's full text; null when the client does not have the file open (the daemon then "
        "reads the disk)."
    )


class WriteTextFileParams(FileRequestBase):
    """`agent/writeTextFile`: put this full text into the file's open buffer, without saving it."""

    content: str


class WriteTextFileResult(Params):
    applied: bool = Field(
        description="True: the buffer holds the content now. False: the client does not have the file open (the "
        "daemon then writes the disk)."
    )


class SaveFilesParams(Payload):
    """`agent/saveFiles`: save these buffers (the run wrote them) before a shell command reads the disk."""

    run_id: str | None = None
    session_id: str
    paths: list[str] = Field(description="Absolute paths.")


class SaveFilesResult(Params):
    saved: list[str] = Field(description="The paths now saved; the others stay unsaved (the model is told).")


class DiagnosticsParams(FileRequestBase):
    """`agent/diagnostics`: the file's diagnostics in the editor, once its language server has settled."""


class EditorDiagnostic(Params):
    """One finding as the editor reports it (its file is the request's)."""

    line: int = Field(ge=1, description="1-based.")
    column: int = Field(ge=1, description="1-based.")
    severity: Literal["error", "warning", "information", "hint"]
    message: str
    source: str | None = None
    code: str | int | None = None


class DiagnosticsResult(Params):
    diagnostics: list[EditorDiagnostic] | None = Field(
        description="The file's diagnostics as the editor has them now; null when nothing in the editor speaks for "
        "this file (then the run reports none)."
    )


# -- review ----------------------------------------------------------------------------------------------------------


class ReviewParams(Params):
    """List the hunks of a session's runs (all of them, or one run's)."""

    session_id: NonEmptyStr | None = Field(
        default=None, description="Required unless runId names a run this daemon process started."
    )
    run_id: NonEmptyStr | None = Field(default=None, description="Only this run's hunks.")

    @model_validator(mode="after")
    def _one_of(self) -> ReviewParams:
        if self.session_id is None and self.run_id is None:
            raise PydanticCustomError("invalid_params", "needs a 'sessionId' or a 'runId'")
        return self


HunkStatus = TypeAliasType("HunkStatus", Literal["pending", "accepted", "rejected"])


class ReviewHunk(Payload):
    """One contiguous change. Line numbers are 1-based; an empty range (count 0) sits just before its start line."""

    id: str = Field(description="Unique in the session: '<runId>.<n>'.")
    status: HunkStatus
    old_start: int = Field(description="First line of the replaced text in the file before the run.")
    old_count: int
    new_start: int = Field(description="First line of the new text in the file as the run left it.")
    new_count: int
    current_start: int | None = Field(
        description="Where the new text is in the file now (1-based; the editor's buffer when the client serves "
        "it), which differs from newStart once lines above changed; null when the hunk is rejected or its lines "
        "(or the unchanged lines around them) changed since — rejecting it would be a conflict."
    )
    old_text: str = Field(description="The lines the run replaced (with their line endings).")
    new_text: str = Field(description="The lines the run put there.")


class ReviewFile(Payload):
    path: str = Field(description="Workspace-relative.")
    absolute_path: str
    created: bool = Field(description="The run created the file.")
    deleted: bool = Field(description="The run deleted the file.")
    hunks: list[ReviewHunk]


class ReviewRun(Payload):
    run_id: str
    files: list[ReviewFile]


class ReviewResult(Payload):
    session_id: str
    workspace: str
    runs: list[ReviewRun] = Field(
        description="In the order the runs ended; runs that changed nothing are absent."
    )


class ApplyReviewParams(Params):
    """Keep (accept) and revert (reject) hunks of a session."""

    session_id: NonEmptyStr
    accept: list[NonEmptyStr] = Field(default_factory=list, description="Hunk ids to keep.")
    reject: list[NonEmptyStr] = Field(default_factory=list, description="Hunk ids to revert.")

    @model_validator(mode="after")
    def _disjoint(self) -> ApplyReviewParams:
        both = set(self.accept) & set(self.reject)
        if both:
            raise PydanticCustomError(
                "invalid_params",
                "a hunk cannot be both accepted and rejected: {ids}",
                {"ids": ", ".join(sorted(both))},
            )
        return self


HunkOutcome = TypeAliasType(
    "HunkOutcome", Literal["accepted", "rejected", "conflict", "not_found", "already_rejected"]
)


class HunkResult(Payload):
    hunk_id: str
    outcome: HunkOutcome = Field(
        description="accepted: kept. rejected: reverted. conflict: its lines changed since the run, nothing "
        "touched (still pending). not_found: no such hunk in the session. already_rejected: it was reverted before."
    )
    path: str | None = None
    message: str | None = None


class ApplyReviewResult(Payload):
    results: list[HunkResult] = Field(description="One per hunk id given: accepts first, then rejects.")
    told: Literal["run", "next_prompt"] | None = Field(
        description="How the model learns of the rejections: steered into the session's live run, or put before "
        "the session's next prompt; null when nothing was rejected."
    )


# -- rewind ----------------------------------------------------------------------------------------------------------


class RewindParams(Params):
    """Restore the files the agent changed since a user message and fork the conversation just before it."""

    session_id: NonEmptyStr
    entry_id: NonEmptyStr = Field(
        description="A user message on the session's active branch: the checkpoint."
    )
    dry_run: bool = Field(default=False, description="Only say what would happen: nothing written, no fork.")


RewindOutcome = TypeAliasType("RewindOutcome", Literal["restored", "conflict", "unchanged", "unrestorable"])


class RewindFile(Payload):
    path: str = Field(description="Workspace-relative.")
    outcome: RewindOutcome = Field(
        description="restored: back to its text at the checkpoint (created files removed; on dryRun: would be). "
        "conflict: changed since the agent left it (by the user, an editor, another branch): left as it is. "
        "unchanged: already as it was. unrestorable: its earlier content was not kept (binary, too large)."
    )
    reason: str | None = None


class RewindResult(Payload):
    session_id: str
    leaf_id: str | None = Field(
        description="Where the new branch continues: the entry before the checkpoint message (null: the root)."
    )
    forked: bool = Field(description="False on dryRun: the session's leaf did not move.")
    prompt: str = Field(description="The checkpoint message's text, for the client to offer again.")
    files: list[RewindFile] = Field(description="Every file the runs after the checkpoint changed, by path.")
    notes: list[str] = Field(
        description="What cannot be restored and is not a file: outside a git work tree, each run's shell "
        "commands, whose effects are unknown."
    )
