"""One batch of tool calls: validate, authorize (policy, session rules, the host), execute, report in call order.

A batch of read-only calls runs in parallel after all are authorized. In any other batch, consecutive `task` calls
run side by side once all of them are authorized (at most `KernelConfig.max_parallel_subagents` sub-agents at once,
each asking its own approvals), and every other call runs on its own, in order, so each approval prompt shows the
workspace as it will be when that call runs.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from kgent.core.errors import KgentError
from kgent.core.events import (
    ChangePreview,
    DecisionSource,
    PermissionOption,
    PermissionOptionKind,
    PermissionRequest,
    PermissionResolved,
    PermissionToolCall,
    ToolCallEvent,
    ToolUpdate,
)
from kgent.core.messages import ToolCall, ToolResultMessage
from kgent.core.paths import trust_file
from kgent.core.redact import redact_keys
from kgent.files.gatedops import GatedFiles
from kgent.files.ops import HostBuffers
from kgent.kernel.diagnostics import edited_path, with_diagnostics
from kgent.kernel.hooks import denial, hooked_result
from kgent.permissions import (
    Intent,
    RuleError,
    RuleScope,
    Scoped,
    Verdict,
    answer_scope,
    binding_hash,
    card,
    classify,
    decide,
    match,
    propose,
    request_id,
    shell_grant,
)
from kgent.permissions.rules import runs_a_program
from kgent.sandbox import spill
from kgent.sandbox.bwrap import Grant
from kgent.session.entries import SessionEntry
from kgent.tools.base import (
    CallDescription,
    ChangeTracking,
    FileChangePreview,
    PreviewError,
    Tool,
    ToolContext,
    ToolOutput,
)
from kgent.tools.task import TaskTool
from kgent.tools.userversion import write_user_version

if TYPE_CHECKING:
    from kgent.kernel.loop import Loop
    from kgent.kernel.run import AgentRun

_CANCELLED = "cancelled: the run was cancelled"


def _option_kind(answer: object, options: tuple[PermissionOption, ...] = ()) -> PermissionOptionKind:
    """The host's answer as a decision: the kind of the option it chose; anything but a known option is a reject."""
    for option in options:
        if option.option_id == answer:
            return option.kind
    match answer:
        case "allow_once" | "allow_always" | "reject_once" | "reject_always":
            return answer
    return "reject_once"


@dataclass(frozen=True, slots=True)
class Decision:
    """How a call that needed a decision was decided: by whom (`source`) and why; `request_id` and `binding` (the
    hash of the arguments shown) when the host was asked."""

    kind: PermissionOptionKind
    source: DecisionSource
    reason: str
    request_id: str | None = None
    binding: str | None = None
    scope: RuleScope = "session"  # how long an 'always' answer lasts
    new_text: str | None = (
        None  # approved with changes: the whole file the user wants instead of the proposal
    )

    @property
    def approved(self) -> bool:
        return self.kind in ("allow_once", "allow_always")


@dataclass(frozen=True, slots=True, kw_only=True)
class Authorization:
    """May the call run, and why not; `binding`: the arguments' hash a person approved (checked again just before
    running); `asked`: a person or their remembered answer approved it, rather than the mode."""

    approved: bool
    reason: str = ""
    binding: str | None = None
    asked: bool = False


class _Unfit(Exception):
    """The call would fail (its preview says why): it goes back to the model as its error, nobody is asked."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(slots=True)
class _Ready:
    call: ToolCall
    tool: Tool
    allow_outside: bool
    binding: str | None = (
        None  # the hash a person's approval was given for; checked again just before running
    )
    grant: Grant | None = None  # a shell call's sandbox allowance (None: unconfined, full mode)
    allow_private: bool = False  # a network call approved for the private address its URL resolves to
    allow_protected: bool = False  # a file call authorized as touching a protected file (or configuration)


class ToolBatch:
    def __init__(self, loop: Loop, run: AgentRun, tracker: ChangeTracking) -> None:
        self.loop = loop
        self.run = run
        self.tracker = tracker
        self.results: dict[str, ToolResultMessage] = {}
        self.announced: set[str] = set()  # calls whose tool_call event went out
        self.decisions: list[SessionEntry] = []  # permission entries, stored with the results
        # calls approved with changes: the preview the person saw and the text they want instead
        self.user_versions: dict[str, tuple[FileChangePreview, str]] = {}
        self.outputs: Path | None = None  # where commands save their full output (_output_dir)

    async def execute(self, calls: tuple[ToolCall, ...]) -> list[ToolResultMessage]:
        """Run the batch; results come back (and are persisted) in the model's call order."""
        try:
            parallel = all((t := self.loop.tools.get(c.name)) is not None and t.read_only for c in calls)
            if parallel:
                ready = [r for r in [await self._prepare(c) for c in calls] if r is not None]
                await _together(self._run(r) for r in ready)
            else:
                # one turn's sub-agents: side by side, this many at a time (the others wait for a free slot)
                slots = asyncio.Semaphore(self.loop.kernel.config.max_parallel_subagents)
                for tasks, group in itertools.groupby(calls, key=self._starts_subagent):
                    if tasks:  # consecutive `task` calls: all announced and authorized, then run together
                        ready = [r for r in [await self._prepare(c) for c in group] if r is not None]
                        await _together(self._in_slot(slots, r) for r in ready)
                        continue
                    for call in group:
                        r = await self._prepare(call)
                        if r is not None:
                            await self._run(r)
        except asyncio.CancelledError:
            for call in calls:  # never leave a call without a result, in the session or in the event stream
                if call.id not in self.results:
                    self.results[call.id] = _error(call, _CANCELLED)
                    if call.id in self.announced:
                        self.run.emit(
                            ToolUpdate(
                                tool_call_id=call.id, status="failed", output=_CANCELLED, is_error=True
                            )
                        )
            await self._persist(calls)
            raise
        await self._persist(calls)
        return [self.results[c.id] for c in calls]

    def _starts_subagent(self, call: ToolCall) -> bool:
        """Whether the call is one of the `task` tool's (a sub-agent's run): those of one turn run side by side."""
        return isinstance(self.loop.tools.get(call.name), TaskTool)

    async def _in_slot(self, slots: asyncio.Semaphore, ready: _Ready) -> None:
        """Run the call once one of the turn's sub-agent slots is free (its `in_progress` update says it started)."""
        async with slots:
            await self._run(ready)

    async def _persist(self, calls: tuple[ToolCall, ...]) -> None:
        """One durable batch: the batch's permission decisions, then its results in call order."""
        ordered = [self.results[c.id] for c in calls if c.id in self.results]
        decisions, self.decisions = self.decisions, []
        await self.loop.persist(decisions + self.loop.tool_result_entries(ordered))

    def _context(
        self,
        allow_outside: bool,
        call_id: str = "",
        grant: Grant | None = None,
        allow_private: bool = False,
        allow_protected: bool = False,
    ) -> ToolContext:
        """The call's context; its file access goes through the files gate, as far as the call was authorized."""
        emit = self.run.emit
        workspace = self.loop.spec.workspace

        def on_update(text: str) -> None:
            emit(ToolUpdate(tool_call_id=call_id, status="in_progress", output=redact_keys(text)))

        return ToolContext(
            workspace=workspace,
            fs=GatedFiles(self.loop.fs, workspace, outside_ok=allow_outside, protected_ok=allow_protected),
            changes=self.tracker,
            allow_outside=allow_outside,
            allow_private=allow_private,
            on_update=on_update if call_id else None,
            bash_timeout=self.loop.kernel.config.bash_timeout,
            output_dir=self._output_dir(),
            sandbox=self.loop.kernel.sandbox if grant is not None else None,
            grant=grant,
            runner=self.loop.runner,
            tool_call_id=f"{self.run.run_id}:{call_id}" if self.loop.spec.origin and call_id else call_id,
            emit=emit,
            subagents=self.loop.kernel.subagents(self.loop, self.run, self.tracker, call_id)
            if call_id
            else None,
            background=self.loop.kernel.background(self.loop.spec.session_id),
            run_id=self.run.run_id,
        )

    def _output_dir(self) -> Path:
        """Where a command saves its full output: with the session when the store keeps files (`<id>.outputs/`: it
        outlives the run, so the path the model is told stays valid and agent/toolOutput finds it later), else the
        run's spill directory (deleted when the run ends)."""
        if self.outputs is None:
            beside = getattr(self.loop.kernel.store, "output_dir", None)
            try:
                self.outputs = beside(self.loop.spec.session_id) if beside is not None else None
            except KgentError:  # no session file: the run's own directory
                self.outputs = None
            if self.outputs is None:
                self.outputs = spill.run_dir(self.run.run_id)
        return self.outputs

    async def _prepare(self, call: ToolCall) -> _Ready | None:
        """Announce the call and decide whether it may run; a refusal becomes its (error) result."""
        tool = self.loop.tools.get(call.name)
        self.announced.add(call.id)
        if tool is None:
            self.run.emit(
                ToolCallEvent(tool_call_id=call.id, name=call.name, kind="other", title=call.name, args={})
            )
            self._fail(call, f"Unknown tool: {call.name}")
            return None
        args, problem = self.loop.arguments.check(call.name, call.arguments)
        if call.arguments_error is None and problem is None and args is not call.arguments:
            call = replace(
                call, arguments=args
            )  # as the model meant it ("5" for 5): what runs and is approved
        desc = tool.describe(call.arguments, self._context(True))
        self.run.emit(
            ToolCallEvent(
                tool_call_id=call.id,
                name=call.name,
                kind=tool.kind,
                title=desc.title,
                args=call.arguments,
                path=desc.path,
                command=desc.command,
            )
        )
        problem = call.arguments_error or problem
        if problem:
            self._fail(call, f"invalid_arguments: {problem}")
            return None
        denied = await denial(self.loop.kernel.hooks, self.loop.spec.hook_context, call)
        if denied is not None:  # an extension's before_tool_call said no (or failed): asking the host is moot
            self._fail(call, denied)
            return None
        workspace = self.loop.spec.workspace
        if getattr(getattr(tool, "intent", None), "url_arg", None) is not None:
            # classifying a URL resolves its host (a blocking DNS look-up): off the event loop
            intent = await asyncio.to_thread(classify, tool, call.arguments, workspace)
        else:
            intent = classify(tool, call.arguments, workspace)
        if self._skill_read(tool, intent, call):  # a read of a known resource (a listed skill's folder)
            auth = Authorization(approved=True)
        else:
            try:
                auth = await self._authorize(call, tool, intent, desc)
            except _Unfit as unfit:  # it would fail: no one is asked to approve a call that cannot succeed
                self._fail(call, unfit.message)
                return None
        if not auth.approved:
            self._fail(call, f"permission_denied: {auth.reason}")
            return None
        mode = self.loop.spec.mode
        grant = shell_grant(mode, intent, approved=auth.asked) if intent.subject == "command" else None
        if (
            grant is not None and not auth.asked
        ):  # what runs unasked is what was judged: the classifier's argvs
            grant = replace(grant, plan=intent.plan)
        return _Ready(
            call,
            tool,
            allow_outside=intent.scope == "outside",
            binding=auth.binding,
            grant=grant,
            allow_private=intent.operation == "network" and intent.protected,
            allow_protected=(intent.protected or bool(intent.configures)) and intent.subject == "path",
        )

    def _skill_read(self, tool: Tool, intent: Intent, call: ToolCall) -> bool:
        """Whether the call only reads inside the folder of a skill the system prompt listed (the user's skills
        live outside the workspace): allowed unasked in every mode, protected files excepted."""
        declared = getattr(tool, "intent", None)
        if intent.operation != "read" or intent.scope != "outside" or intent.protected or declared is None:
            return False
        raw = call.arguments.get(declared.path_arg) if declared.path_arg else None
        if not isinstance(raw, str) or "\0" in raw:
            return False
        return self.loop.resources.is_skill_file(self.loop.spec.workspace / raw)

    async def _authorize(
        self, call: ToolCall, tool: Tool, intent: Intent, desc: CallDescription
    ) -> Authorization:
        """Verdict (the mode's policy, the session's remembered answers) → ask the host when they leave it open →
        record the decision (event and session entry)."""
        loop = self.loop
        found = match(intent, self._rules())
        if found is not None and found.allow and intent.configures:
            found = None  # no rule allows writing configuration: a person sees each such write
        runs = runs_a_program(intent) if found is not None and found.allow else None
        if runs is not None:
            found = None  # nor a command whose option runs another program (`rg --pre`, `git grep -O` …)
        remembered = None if found is None else found.allow
        runner = loop.runner
        verdict = decide(
            loop.spec.mode,
            intent,
            sandboxed=loop.kernel.sandbox.contains and runner.sandboxed,
            unsandboxed=None
            if runner.sandboxed
            else f"shell commands run in {runner.where}, outside the sandbox",
        )
        if runs is not None:
            verdict = replace(
                verdict, reason=f"{verdict.reason}; no rule covers {runs}, which runs a program"
            )
        if verdict.action == "allow" and remembered is not False:
            return Authorization(approved=True)
        if found is not None and not found.allow:
            decision = Decision("reject_once", found.source, found.reason)
        elif verdict.action == "deny":
            decision = Decision("reject_once", "policy", verdict.reason)
        elif found is not None:
            decision = Decision("allow_always", found.source, found.reason)
        else:
            decision = await self._ask(call, tool, intent, desc, verdict)
            if decision.kind in ("allow_always", "reject_always"):
                decision = self._remember(intent, decision)
        self._record(call, intent, decision)
        return Authorization(
            approved=decision.approved,
            reason=decision.reason,
            binding=decision.binding,
            asked=decision.approved,  # a person, or their remembered answer, approved it (not the mode)
        )

    def _rules(self) -> list[Scoped]:
        """The rules that speak for this run's calls: the session's, the rule files' denies as they are now, and
        their allows as the run found them (plus those its own 'always' answers wrote)."""
        loop = self.loop
        live = loop.kernel.rules_in_force(loop.spec.session_id, loop.spec.workspace)
        if loop.file_allows is None:
            return live
        files = [s for s in live if s.scope != "session" and not s.rule.allow]
        return [s for s in live if s.scope == "session"] + files + loop.file_allows

    def _rule_files(self) -> tuple[tuple[int, int, int] | None, ...]:
        """What the rule files and the trust list are now (to tell whether a tool call changed them)."""
        files, workspace = self.loop.kernel.rules.files, self.loop.spec.workspace
        paths = (
            files.project_path(workspace),
            files.personal_path(workspace),
            files.user_path(),
            trust_file(files.env),
        )
        out: list[tuple[int, int, int] | None] = []
        for path in paths:
            try:
                st = path.stat()
                out.append((st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                out.append(None)
        return tuple(out)

    def _remember(self, intent: Intent, decision: Decision) -> Decision:
        """Store an 'always' answer as the rules its option showed, where it said (session, or the project's rules:
        its file when trusted, else the user's own file for it; a file that cannot be written keeps them for the
        session, and the reason says so)."""
        kernel, spec = self.loop.kernel, self.loop.spec
        allow = decision.kind == "allow_always"
        if decision.scope != "session":
            rules = [r if allow else replace(r, allow=False) for r in propose(intent).rules]
            try:
                file = kernel.rules.files.writable(decision.scope, spec.workspace)
                for rule in rules:
                    file.add(rule)
                    if rule.allow and self.loop.file_allows is not None:
                        self.loop.file_allows.append(Scoped(rule, decision.scope))
                return decision
            except (RuleError, OSError) as exc:
                reason = f"{decision.reason} (kept for this session only: {exc})"
                decision = replace(decision, scope="session", reason=reason)
        kernel.rules_for(spec.session_id).remember(intent, allow)
        return decision

    async def _ask(
        self, call: ToolCall, tool: Tool, intent: Intent, desc: CallDescription, verdict: Verdict
    ) -> Decision:
        """Put the call before the host and wait for the answer (or the approval timeout). Raises _Unfit, before
        asking, for an edit-kind call whose preview says it would fail."""
        loop, run = self.loop, self.run
        preview = None
        found: FileChangePreview | None = None
        if tool.kind == "edit":
            try:
                # the card shows the person the change (a protected file's too): the preview may read what it edits
                context = self._context(intent.scope == "outside", allow_protected=True)
                found = await tool.preview(call.arguments, context)
            except PreviewError as e:
                raise _Unfit(e.message) from None
            except Exception:  # a preview is a courtesy; the call itself reports other problems
                found = None
            if found is not None:
                preview = ChangePreview(diff=found.diff, old_text=found.old_text, new_text=found.new_text)
        loop.permission_count += 1
        binding = binding_hash(call.id, call.name, call.arguments)
        rid = request_id(run.run_id, loop.permission_count, binding)
        future = run.open_permission(rid)
        options, no_rule = card(
            intent, project_trusted=loop.kernel.rules.files.is_trusted(loop.spec.workspace)
        )
        run.emit(
            PermissionRequest(
                request_id=rid,
                tool_call=PermissionToolCall(
                    tool_call_id=call.id,
                    name=call.name,
                    kind=tool.kind,
                    title=desc.title,
                    args=call.arguments,
                    path=desc.path,
                    command=desc.command,
                    preview=preview,
                ),
                risk=verdict.risk,
                reason=verdict.reason,
                operation=intent.operation,
                scope=intent.scope,
                agent=loop.spec.origin.agent if loop.spec.origin else None,
                options=options,
                no_rule=no_rule,
            )
        )
        timeout = loop.kernel.config.approval_timeout
        try:
            answer = await asyncio.wait_for(future, timeout) if timeout else await future
        except TimeoutError:
            return Decision("reject_once", "timeout", "the approval timed out", rid, binding)
        finally:
            run.close_permission(rid)
        kind = _option_kind(answer.option_id, options)
        approved = kind in ("allow_once", "allow_always")
        reason = "the user approved" if approved else "the user rejected this call"
        new_text = answer.new_text if approved else None
        if found is None or new_text == found.new_text:
            new_text = None  # nothing was proposed to change, or the user's version is the proposal
        if new_text is not None and found is not None:
            self.user_versions[call.id] = (found, new_text)
            reason = "the user approved their own version of the change"
        return Decision(
            kind, "host", reason, rid, binding, answer_scope(str(answer.option_id)), new_text=new_text
        )

    def _record(self, call: ToolCall, intent: Intent, decision: Decision) -> None:
        label = _label(decision, self.loop.spec.mode)
        self.run.emit(
            PermissionResolved(
                request_id=decision.request_id,
                tool_call_id=call.id,
                decision=decision.kind,
                approved=decision.approved,
                source=decision.source,
                reason=decision.reason,
                edited=True if decision.new_text is not None else None,
                label=label,
            )
        )
        entry = self.loop.entry(
            "permission",
            toolCallId=call.id,
            tool=call.name,
            decision=decision.kind,
            approved=decision.approved,
            source=decision.source,
            argsSha256=decision.binding or binding_hash(call.id, call.name, call.arguments),
            operation=intent.operation,
            scope=intent.scope,
            reason=decision.reason,
            label=label,
            rules=self.loop.kernel.rules_for(self.loop.spec.session_id).to_list(),
            **({"edited": True} if decision.new_text is not None else {}),  # the fact, never the text
        )
        self.decisions.append(entry)

    async def _run(self, ready: _Ready) -> None:
        call, emit = ready.call, self.run.emit
        if ready.binding is not None and binding_hash(call.id, call.name, call.arguments) != ready.binding:
            # the arguments are shared with the events a host saw; an approval holds only for what was shown
            self._fail(call, "permission_denied: the arguments changed after they were approved")
            return
        emit(ToolUpdate(tool_call_id=call.id, status="in_progress"))
        fs = self.loop.fs  # None: the local files
        buffers = cast(HostBuffers, fs) if fs is not None and _serves_buffers(type(fs)) else None
        unsaved: list[str] = []
        diagnostics, checked = self.loop.diagnostics, None
        edited = (
            None
            if diagnostics is None
            else edited_path(ready.tool, call.arguments, self.loop.spec.workspace, ready.allow_outside)
        )
        # a command may change files the run has diagnostics of: they are checked again after it
        command = (
            diagnostics is not None and bool(diagnostics.known) and ready.tool.intent.effect == "execute"
        )
        try:
            if diagnostics is not None and edited is not None:  # the file's diagnostics before the change
                await diagnostics.before(edited)
            unsaved = (
                await buffers.save_buffers() if buffers and ready.tool.intent.effect == "execute" else []
            )
            ctx = self._context(
                ready.allow_outside, call.id, ready.grant, ready.allow_private, ready.allow_protected
            )
            version = self.user_versions.pop(call.id, None)
            loop = self.loop
            frozen = loop.file_allows is not None or _reads_only(ready.tool)
            if not frozen:
                files_before = self._rule_files()
                allows_before = [
                    s for s in loop.kernel.rules.files.scoped(loop.spec.workspace) if s.rule.allow
                ]
            out = (
                await write_user_version(version[0], version[1], ctx)
                if version is not None  # approved with changes: the user's text, not the proposal
                else await ready.tool.run(call.arguments, ctx)
            )
            if not frozen and loop.file_allows is None and self._rule_files() != files_before:
                loop.file_allows = allows_before  # the run changed its own rules: not in this run
        except asyncio.CancelledError:
            self.results[call.id] = _error(call, _CANCELLED)
            emit(ToolUpdate(tool_call_id=call.id, status="failed", output=_CANCELLED, is_error=True))
            raise
        except Exception as exc:  # a tool bug must not kill the run: the model sees it
            out = ToolOutput(content=f"tool_error: {type(exc).__name__}: {exc}", is_error=True)
        if buffers is not None:
            out = _with_notes(out, buffers.take_notes(), unsaved)
        if diagnostics is not None and (
            edited is not None or command
        ):  # what it broke: for the model, the fronts
            out, checked = await with_diagnostics(diagnostics, edited, out)
        result = await hooked_result(
            self.loop.kernel.hooks,
            self.loop.spec.hook_context,
            call,
            ToolResultMessage(
                tool_call_id=call.id,
                name=call.name,
                content=out.content,
                is_error=out.is_error,
                details=out.details,
            ),
        )
        # what a command printed of a key reaches no model request, event or session line
        result = _keys_redacted(result)
        saved = result.details.get("fullOutputPath")
        if isinstance(saved, str):  # the full output saved with the session: no key in it either
            await asyncio.to_thread(_redact_saved, Path(saved))
        self.results[call.id] = result
        emit(
            ToolUpdate(
                tool_call_id=call.id,
                status="failed" if result.is_error else "completed",
                output=result.content,
                diff=result.details.get("diff"),
                is_error=result.is_error,
                details={k: v for k, v in result.details.items() if k != "diff"},
                diagnostics=checked,
            )
        )

    def _fail(self, call: ToolCall, text: str) -> None:
        result = _error(call, text)
        self.results[call.id] = result
        self.run.emit(ToolUpdate(tool_call_id=call.id, status="failed", output=text, is_error=True))


async def _together(work: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run `work` concurrently until all of it has ended. A cancel, or a failure (a bug), cancels the rest; either way
    nothing is left running when this returns or raises: each cancelled call has reported its end (a sub-agent's
    run its run_end) first."""
    tasks = [asyncio.ensure_future(w) for w in work]
    if not tasks:
        return
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()  # nothing for those that have ended
        await asyncio.wait(tasks)
    failures = [t.exception() for t in tasks if not t.cancelled()]
    failure = next((f for f in failures if f is not None), None)
    if failure is not None:
        raise failure
    if any(t.cancelled() for t in tasks):  # as gather: a call cancelled on its own cancels the batch
        raise asyncio.CancelledError


def _with_notes(out: ToolOutput, notes: list[str], unsaved: list[str]) -> ToolOutput:
    """The output with the file notes of the call appended (the model and the person both see them)."""
    if unsaved:
        notes = [
            *notes,
            "These files have unsaved changes in the editor that the command did not see (it read the disk): "
            + ", ".join(unsaved),
        ]
    if not notes:
        return out
    text = "\n".join(f"[kgent: {n}]" for n in notes)
    return replace(out, content=f"{out.content}\n\n{text}" if out.content else text)


_LASTING: Final = {"session": "this session", "project": "in this project", "user": "in all your projects"}


def _label(decision: Decision, mode: str) -> str:
    """The decision in a person's words (permission_resolved's `label`): who decided and for how long."""
    verb = "allowed" if decision.approved else "rejected"
    match decision.source:
        case "host" if decision.new_text is not None:
            return "allowed with your changes"
        case "host" if decision.kind in ("allow_always", "reject_always"):
            return f"always {verb} {_LASTING[decision.scope]}"
        case "host":
            return f"{verb} once" if decision.approved else "rejected"
        case "policy":
            return f"{verb} by the {mode} mode"
        case "timeout":
            return "rejected: no answer in time"
        case _:  # a rule: its reason names its scope and text
            return decision.reason


def _keys_redacted(result: ToolResultMessage) -> ToolResultMessage:
    """The result with every configured key masked in its text and its diff (kgent.core.redact.redact_keys)."""
    content = redact_keys(result.content)
    diff = result.details.get("diff")
    clean_diff = redact_keys(diff) if isinstance(diff, str) else diff
    if content == result.content and clean_diff == diff:
        return result
    details = result.details if clean_diff == diff else {**result.details, "diff": clean_diff}
    return replace(result, content=content, details=details)


def _redact_saved(path: Path) -> None:
    """Mask the configured keys in a command's saved full output, as in its result: a key the command printed is
    kept in no file of the session. Best effort: a file that is gone is left so."""
    try:
        data = path.read_bytes()
    except OSError:
        return
    text = data.decode("utf-8", "replace")
    clean = redact_keys(text)
    if clean == text:
        return
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(clean.encode())
    os.replace(tmp, path)


@functools.cache
def _serves_buffers(kind: type) -> bool:
    """Whether a FileOps class is an editor's (HostBuffers), asked once per class: a Protocol's isinstance walks
    its members every time (~15 µs, every tool call)."""
    return issubclass(kind, HostBuffers)


def _reads_only(tool: Tool) -> bool:
    """One of Kgent's own file-reading tools (read, grep, find, ls): it opens files read-only through the gate, so a
    call of it cannot change a rule file or the trust list, and the check around each call that could (the four
    files' stats before and after, the rules in force before: a run must not widen its own rules) is not needed.
    An extension's tool is checked whatever its intent says."""
    intent = getattr(tool, "intent", None)
    return (
        intent is not None
        and intent.effect == "read"
        and intent.path_arg is not None
        and type(tool).__module__.startswith("kgent.tools.")
    )


def _error(call: ToolCall, text: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call.id, name=call.name, content=text, is_error=True)
