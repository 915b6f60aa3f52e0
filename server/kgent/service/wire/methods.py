"""The method table: every protocol method declared once — name, direction, params and result models, the service
call, and which fronts offer it (or why not).

The daemon's dispatch (kgent.daemon.server), the HTTP routes and their OpenAPI (kgent.http.app), protocol.schema.json
and the VS Code shim's generated types (kgent.service.wire.schema) and the method lists of protocol.md and
protocol-http.md (a test) all come from METHODS. The daemon offers every method (protocol.md is its contract); HTTP
and ACP say per method what they offer, or why not.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from kgent.service.commands import menu
from kgent.service.service import Service
from kgent.service.wire import commands as C
from kgent.service.wire import files as F
from kgent.service.wire import requests as Q
from kgent.service.wire import results as R

Direction = Literal["client → daemon", "daemon → client", "both"]
Call = Callable[[Service, Any], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Http:
    """An HTTP route. `path` is spelled as protocol-http.md spells it (`{runId}`); its placeholders and, for GET, the
    query string, for POST and PATCH the JSON body, make the method's params. `built`: the route comes from this row (False:
    http/app.py writes it, because it does more than the call — `why`)."""

    verb: Literal["GET", "POST", "PATCH", "DELETE"]
    path: str
    built: bool = True
    why: str = ""


@dataclass(frozen=True, slots=True)
class Acp:
    """The ACP method(s) that carry this one."""

    method: str


@dataclass(frozen=True, slots=True)
class Absent:
    """A front does not offer the method, because `why`."""

    why: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Method:
    name: str
    direction: Direction
    kind: Literal["request", "notification"]
    # A wire type, or the name of one in kgent.service.wire.events (imported when first asked for: serving needs
    # none of the event models, and they cost start-up time); None: no params / a `null` result (requests) or none
    # (notifications).
    params_ref: Any = None
    result_ref: Any = None
    call: Call | None = None  # client → daemon requests: the service call, given the parsed params
    http: tuple[Http, ...] | Absent
    acp: Acp | Absent

    @property
    def params(self) -> Any:
        return _resolve(self.params_ref)

    @property
    def result(self) -> Any:
        return _resolve(self.result_ref)


def _resolve(ref: Any) -> Any:
    if isinstance(ref, str):
        return getattr(importlib.import_module("kgent.service.wire.events"), ref)
    return ref


# -- the service calls ---------------------------------------------------------------------------------------------


async def _initialize(svc: Service, raw: Any) -> R.InitializeResult:
    # `initialize` is checked without pydantic (kgent.service.handshake): it is answered on the boot path.
    return R.InitializeResult.model_validate(svc.initialize(raw))


async def _shutdown(svc: Service, p: None) -> None:
    await svc.shutdown()


async def _run(svc: Service, p: Q.RunParams) -> Any:
    # A RunHandle, not the result: each front starts forwarding its events, then answers RunResult.
    return await svc.start_run(p)


async def _cancel(svc: Service, p: Q.CancelParams) -> R.CancelResult:
    return R.CancelResult(cancelled=svc.cancel(p.run_id, stop_background=bool(p.stop_background)))


async def _background(svc: Service, p: Q.BackgroundParams) -> R.BackgroundResult:
    found = await svc.background(p.session_id, p.stop)
    return R.BackgroundResult(
        commands=[
            R.BackgroundCommand(
                id=c.id,
                command=c.command,
                state=c.state,
                exit_code=c.exit_code,
                tool_call_id=c.tool_call_id,
                started_run_id=c.run_id,
                output_bytes=c.output_bytes,
                sandbox=c.sandbox,
                started=c.started,
            )
            for c in found
        ]
    )


async def _steer(svc: Service, p: Q.RunTextParams) -> R.EmptyResult:
    svc.queue(p.run_id, p.text, steer=True)
    return R.EmptyResult()


async def _follow_up(svc: Service, p: Q.RunTextParams) -> R.EmptyResult:
    svc.queue(p.run_id, p.text, steer=False)
    return R.EmptyResult()


async def _clear_queue(svc: Service, p: Q.RunIdParams) -> R.EmptyResult:
    svc.clear_queue(p.run_id)
    return R.EmptyResult()


async def _sessions(svc: Service, p: Q.SessionsParams) -> R.SessionsResult:
    return await svc.sessions(p.workspace, p.query)


async def _session(svc: Service, p: Q.SessionParams) -> R.SessionResult:
    return await svc.session(p.session_id, bool(p.branch_only))


async def _tool_output(svc: Service, p: Q.ToolOutputParams) -> R.ToolOutputResult:
    return await svc.tool_output(p.session_id, p.tool_call_id)


async def _fork(svc: Service, p: Q.ForkParams) -> R.ForkResult:
    return await svc.fork(p.session_id, p.entry_id)


async def _rewind(svc: Service, p: F.RewindParams) -> F.RewindResult:
    return await svc.rewind(p)


async def _rename_session(svc: Service, p: Q.RenameSessionParams) -> R.EmptyResult:
    await svc.rename_session(p.session_id, p.title)
    return R.EmptyResult()


async def _delete_session(svc: Service, p: Q.DeleteSessionParams) -> R.EmptyResult:
    await svc.delete_session(p.session_id)
    return R.EmptyResult()


async def _compact(svc: Service, p: Q.CompactParams) -> R.CompactResult:
    return await svc.compact(p)


async def _review(svc: Service, p: F.ReviewParams) -> F.ReviewResult:
    return await svc.review(p)


async def _apply_review(svc: Service, p: F.ApplyReviewParams) -> F.ApplyReviewResult:
    return await svc.apply_review(p)


async def _rules(svc: Service, p: Q.RulesParams) -> R.RulesResult:
    return await svc.list_rules(p.workspace)


async def _add_rule(svc: Service, p: Q.RuleParams) -> R.AddRuleResult:
    return await svc.add_rule(p)


async def _remove_rule(svc: Service, p: Q.RuleParams) -> R.RemoveRuleResult:
    return await svc.remove_rule(p)


async def _commands(svc: Service, p: C.CommandsParams) -> C.CommandsResult:
    listed = svc.commands(p.workspace)
    return C.CommandsResult.model_validate(
        {"commands": [c.to_dict() for c in listed], "menu": [e.to_dict() for e in menu(listed)]}
    )


async def _command(svc: Service, p: C.CommandParams) -> C.CommandResult:
    return await svc.command(p)


async def _export(svc: Service, p: C.ExportParams) -> C.ExportResult:
    return await svc.export(p)


# -- the table -----------------------------------------------------------------------------------------------------

_IN: Direction = "client → daemon"
_OUT: Direction = "daemon → client"
_LIFETIME = Absent("the server's process owns its lifetime (SIGTERM); a client just disconnects")
_NO_STEER = Absent("ACP has no way into a running prompt: the client sends its next session/prompt")
_NO_RULES = Absent(
    "ACP has no request for an agent's settings: its clients answer the permission options, whose names say the rule"
)
_BUFFERS = Absent("the HTTP front reads and writes the disk: no client serves editor buffers over HTTP")

METHODS: tuple[Method, ...] = (
    Method(
        name="initialize",
        direction=_IN,
        kind="request",
        params_ref=Q.InitializeParams,
        result_ref=R.InitializeResult,
        call=_initialize,
        http=(Http("GET", "/api/info", built=False, why="the server's own settings: no params to send"),),
        acp=Acp("initialize"),
    ),
    Method(
        name="shutdown",
        direction=_IN,
        kind="request",
        call=_shutdown,
        http=_LIFETIME,
        acp=Absent("an ACP agent ends when the client closes its stdin"),
    ),
    Method(
        name="exit",
        direction=_IN,
        kind="notification",
        http=_LIFETIME,
        acp=Absent("an ACP agent ends when the client closes its stdin"),
    ),
    Method(
        name="agent/run",
        direction=_IN,
        kind="request",
        params_ref=Q.RunParams,
        result_ref=R.RunResult,
        call=_run,
        http=(Http("POST", "/api/runs", built=False, why="it registers the run's event log for SSE replay"),),
        acp=Acp("session/new, session/load, session/prompt"),
    ),
    Method(
        name="agent/cancel",
        direction=_IN,
        kind="request",
        params_ref=Q.CancelParams,
        result_ref=R.CancelResult,
        call=_cancel,
        http=(Http("POST", "/api/runs/{runId}/cancel"),),
        acp=Acp("session/cancel"),
    ),
    Method(
        name="agent/steer",
        direction=_IN,
        kind="request",
        params_ref=Q.RunTextParams,
        result_ref=R.EmptyResult,
        call=_steer,
        http=(Http("POST", "/api/runs/{runId}/steer"),),
        acp=_NO_STEER,
    ),
    Method(
        name="agent/followUp",
        direction=_IN,
        kind="request",
        params_ref=Q.RunTextParams,
        result_ref=R.EmptyResult,
        call=_follow_up,
        http=(Http("POST", "/api/runs/{runId}/followUp"),),
        acp=_NO_STEER,
    ),
    Method(
        name="agent/background",
        direction=_IN,
        kind="request",
        params_ref=Q.BackgroundParams,
        result_ref=R.BackgroundResult,
        call=_background,
        http=(Http("POST", "/api/sessions/{sessionId}/background"),),
        acp=Absent(
            "ACP has no method for it: an ACP client sees the bash, bash_output and bash_stop calls as tool calls"
        ),
    ),
    Method(
        name="agent/clearQueue",
        direction=_IN,
        kind="request",
        params_ref=Q.RunIdParams,
        result_ref=R.EmptyResult,
        call=_clear_queue,
        http=(Http("POST", "/api/runs/{runId}/clearQueue"),),
        acp=Absent("nothing is queued over ACP: it has no steer or follow-up"),
    ),
    Method(
        name="agent/sessions",
        direction=_IN,
        kind="request",
        params_ref=Q.SessionsParams,
        result_ref=R.SessionsResult,
        call=_sessions,
        http=(Http("GET", "/api/sessions"),),
        acp=Acp("session/list"),
    ),
    Method(
        name="agent/session",
        direction=_IN,
        kind="request",
        params_ref=Q.SessionParams,
        result_ref=R.SessionResult,
        call=_session,
        http=(Http("GET", "/api/sessions/{sessionId}"),),
        acp=Acp("session/load"),
    ),
    Method(
        name="agent/toolOutput",
        direction=_IN,
        kind="request",
        params_ref=Q.ToolOutputParams,
        result_ref=R.ToolOutputResult,
        call=_tool_output,
        http=(Http("GET", "/api/sessions/{sessionId}/tools/{toolCallId}/output"),),
        acp=Absent(
            "ACP has no request for a tool call's output after the turn: its clients keep what the tool_call_update "
            "carried"
        ),
    ),
    Method(
        name="agent/fork",
        direction=_IN,
        kind="request",
        params_ref=Q.ForkParams,
        result_ref=R.ForkResult,
        call=_fork,
        http=(Http("POST", "/api/sessions/{sessionId}/fork"),),
        acp=Acp("session/fork"),
    ),
    Method(
        name="agent/renameSession",
        direction=_IN,
        kind="request",
        params_ref=Q.RenameSessionParams,
        result_ref=R.EmptyResult,
        call=_rename_session,
        http=(Http("PATCH", "/api/sessions/{sessionId}"),),
        acp=Absent("ACP has no request to rename a session (session/list only shows the title)"),
    ),
    Method(
        name="agent/deleteSession",
        direction=_IN,
        kind="request",
        params_ref=Q.DeleteSessionParams,
        result_ref=R.EmptyResult,
        call=_delete_session,
        http=(
            Http(
                "DELETE",
                "/api/sessions/{sessionId}",
                built=False,
                why="it also removes the archived event logs of the session's runs",
            ),
        ),
        acp=Acp("session/delete"),
    ),
    Method(
        name="agent/compact",
        direction=_IN,
        kind="request",
        params_ref=Q.CompactParams,
        result_ref=R.CompactResult,
        call=_compact,
        http=(Http("POST", "/api/sessions/{sessionId}/compact"),),
        acp=Absent("ACP has no compaction request"),
    ),
    Method(
        name="agent/review",
        direction=_IN,
        kind="request",
        params_ref=F.ReviewParams,
        result_ref=F.ReviewResult,
        call=_review,
        http=(Http("GET", "/api/sessions/{sessionId}/review"),),
        acp=Absent("ACP has no review: its clients show each edit's diff in the tool call"),
    ),
    Method(
        name="agent/applyReview",
        direction=_IN,
        kind="request",
        params_ref=F.ApplyReviewParams,
        result_ref=F.ApplyReviewResult,
        call=_apply_review,
        http=(Http("POST", "/api/sessions/{sessionId}/review"),),
        acp=Absent("ACP has no review: its clients show each edit's diff in the tool call"),
    ),
    Method(
        name="agent/rules",
        direction=_IN,
        kind="request",
        params_ref=Q.RulesParams,
        result_ref=R.RulesResult,
        call=_rules,
        http=(Http("GET", "/api/rules"),),
        acp=_NO_RULES,
    ),
    Method(
        name="agent/addRule",
        direction=_IN,
        kind="request",
        params_ref=Q.RuleParams,
        result_ref=R.AddRuleResult,
        call=_add_rule,
        http=(Http("POST", "/api/rules"),),
        acp=_NO_RULES,
    ),
    Method(
        name="agent/removeRule",
        direction=_IN,
        kind="request",
        params_ref=Q.RuleParams,
        result_ref=R.RemoveRuleResult,
        call=_remove_rule,
        http=(Http("POST", "/api/rules/remove"),),
        acp=_NO_RULES,
    ),
    Method(
        name="agent/commands",
        direction=_IN,
        kind="request",
        params_ref=C.CommandsParams,
        result_ref=C.CommandsResult,
        call=_commands,
        http=(Http("GET", "/api/commands"),),
        acp=Acp("session/update"),  # available_commands_update, after session/new and session/load
    ),
    Method(
        name="agent/command",
        direction=_IN,
        kind="request",
        params_ref=C.CommandParams,
        result_ref=C.CommandResult,
        call=_command,
        http=(Http("POST", "/api/command"),),
        acp=Acp(
            "session/prompt"
        ),  # a prompt starting with /help, /cost, /model or /mode is answered, not run
    ),
    Method(
        name="agent/exportSession",
        direction=_IN,
        kind="request",
        params_ref=C.ExportParams,
        result_ref=C.ExportResult,
        call=_export,
        http=(Http("GET", "/api/sessions/{sessionId}/export"),),
        acp=Absent(
            "ACP has no request for an agent's file or text outside a turn, nor a way to hand a client a "
            "download: `kgent sessions export ID` on the command line"
        ),
    ),
    Method(
        name="agent/rewind",
        direction=_IN,
        kind="request",
        params_ref=F.RewindParams,
        result_ref=F.RewindResult,
        call=_rewind,
        http=(Http("POST", "/api/sessions/{sessionId}/rewind"),),
        acp=Absent(
            "ACP has no checkpoint or rewind request (its session/fork, unstable, forks only the conversation)"
        ),
    ),
    Method(
        name="$/cancelRequest",
        direction="both",
        kind="notification",
        params_ref=Q.CancelRequestParams,
        http=Absent("an HTTP request is cancelled by closing its connection"),
        acp=Absent("the ACP SDK cancels its own requests"),
    ),
    Method(
        name="agent/event",
        direction=_OUT,
        kind="notification",
        params_ref="AgentEventParams",
        http=(
            Http("GET", "/api/runs/{runId}/events", built=False, why="an SSE stream with replay"),
            Http(
                "GET",
                "/api/sessions/{sessionId}/events",
                built=False,
                why="an SSE stream of a session's runs",
            ),
        ),
        acp=Acp("session/update"),
    ),
    Method(
        name="agent/permission",
        direction=_OUT,
        kind="request",
        params_ref="PermissionParams",
        result_ref=Q.PermissionResult,
        http=(
            Http("GET", "/api/permissions", built=False, why="the open approvals, kept by the server's hub"),
            Http("POST", "/api/permissions/{requestId}", built=False, why="the first answer wins"),
        ),
        acp=Acp("session/request_permission"),
    ),
    Method(
        name="agent/readTextFile",
        direction=_OUT,
        kind="request",
        params_ref=F.ReadTextFileParams,
        result_ref=F.ReadTextFileResult,
        http=_BUFFERS,
        acp=Acp("fs/read_text_file"),
    ),
    Method(
        name="agent/writeTextFile",
        direction=_OUT,
        kind="request",
        params_ref=F.WriteTextFileParams,
        result_ref=F.WriteTextFileResult,
        http=_BUFFERS,
        acp=Acp("fs/write_text_file"),
    ),
    Method(
        name="agent/saveFiles",
        direction=_OUT,
        kind="request",
        params_ref=F.SaveFilesParams,
        result_ref=F.SaveFilesResult,
        http=_BUFFERS,
        acp=Absent("ACP's fs/write_text_file writes the file itself: there is nothing left to save"),
    ),
    Method(
        name="agent/diagnostics",
        direction=_OUT,
        kind="request",
        params_ref=F.DiagnosticsParams,
        result_ref=F.DiagnosticsResult,
        http=Absent("no editor behind HTTP: the server's own language servers (protocol.md § Diagnostics)"),
        acp=Absent("ACP has no diagnostics request: the agent's own language servers answer"),
    ),
)

BY_NAME: dict[str, Method] = {m.name: m for m in METHODS}
