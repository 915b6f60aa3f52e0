"""The fronts' wire models (pydantic, at the edge only): what clients send, what the daemon (over stdio) and the HTTP
front answer and send.

Imported by kgent.daemon.server, off the handshake path: `initialize` is answered before pydantic is loaded (it costs
more than the whole handshake; see kgent.daemon.boot). The same models produce protocol.schema.json and the VS Code
shim's types: `python -m kgent.service.wire` regenerates both. The event models (wire.events) are not needed to serve
and are not imported here.

Each model's validator is built at its first use (`defer_build`, kgent.service.wire.base), not at import: a process
builds the few it serves, not all ~150. `warm()` builds a first run's ahead of it (the service's warm-up).
"""

from kgent.service.wire.base import Params, Payload, params_error
from kgent.service.wire.commands import CommandParams, CommandResult, ExportParams, ExportResult
from kgent.service.wire.files import (
    ApplyReviewParams,
    ApplyReviewResult,
    ReviewParams,
    ReviewResult,
    RewindParams,
    RewindResult,
)
from kgent.service.wire.requests import (
    CompactParams,
    DeleteSessionParams,
    ForkParams,
    InitializeParams,
    PermissionResult,
    RenameSessionParams,
    RuleParams,
    RulesParams,
    RunIdParams,
    RunParams,
    RunTextParams,
    SessionParams,
    SessionsParams,
    ToolOutputParams,
    answer_adapter,
    chosen_answer,
    chosen_option,
)
from kgent.service.wire.results import (
    AddRuleResult,
    CancelResult,
    CompactResult,
    EmptyResult,
    ForkResult,
    InitializeResult,
    RemoveRuleResult,
    RulesResult,
    RunResult,
    SessionResult,
    SessionsResult,
    ToolOutputResult,
)


def warm() -> None:
    """Build what a first run validates: its params and result, the listing a front shows, a permission answer."""
    for model in (RunParams, RunResult, SessionsParams, SessionsResult, CancelResult, EmptyResult):
        model.model_rebuild()
    answer_adapter()


__all__ = [
    "AddRuleResult",
    "RemoveRuleResult",
    "RuleParams",
    "RulesParams",
    "RulesResult",
    "ApplyReviewParams",
    "ApplyReviewResult",
    "ReviewParams",
    "ReviewResult",
    "RewindParams",
    "RewindResult",
    "CancelResult",
    "CommandParams",
    "CommandResult",
    "ExportParams",
    "ExportResult",
    "CompactParams",
    "CompactResult",
    "EmptyResult",
    "DeleteSessionParams",
    "ForkParams",
    "ForkResult",
    "InitializeParams",
    "InitializeResult",
    "Params",
    "Payload",
    "PermissionResult",
    "RenameSessionParams",
    "RunIdParams",
    "RunParams",
    "RunResult",
    "RunTextParams",
    "SessionParams",
    "SessionResult",
    "SessionsParams",
    "SessionsResult",
    "ToolOutputParams",
    "ToolOutputResult",
    "answer_adapter",
    "chosen_answer",
    "chosen_option",
    "params_error",
    "warm",
]
