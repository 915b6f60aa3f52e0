"""The agent loop: model (streamed) → tool calls → permission → execution → results → model … until it settles.

Pure orchestration: I/O happens in the provider, the tools and the store it is given.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgent.context.compaction import Compaction, CompactionSettings, RunCompaction, RunContext
from kgent.context.instructions import ENTRY_TYPE as INSTRUCTIONS
from kgent.context.instructions import render
from kgent.context.projection import own_context
from kgent.context.skills import ENTRY_TYPE as SKILLS
from kgent.context.skills import changed_note
from kgent.context.tokens import estimate_overhead
from kgent.core.diagnostics import DiagnosticSource
from kgent.core.errors import KgentError
from kgent.core.events import InputSource, MessageEnd, PlanEvent, RunResult, RunStart, RunStatus, UserInput
from kgent.core.messages import (
    AssistantMessage,
    ImagePart,
    InstructionsMessage,
    Message,
    ToolResultMessage,
    UserMessage,
    message_to_dict,
)
from kgent.files.ops import FileOps
from kgent.kernel.arguments import ArgumentChecks
from kgent.kernel.cost import RunCost
from kgent.kernel.diagnostics import RunDiagnostics
from kgent.kernel.hooks import HookContext, extension_skill_dirs, hooked_request, run_end_entries
from kgent.kernel.images import ImageScan, sees_images, with_image_data, without_images
from kgent.kernel.prompt import system_prompt
from kgent.kernel.resources import Found, RunResources
from kgent.kernel.review import RunReview
from kgent.kernel.run import AgentRun
from kgent.kernel.toolexec import ToolBatch
from kgent.kernel.turn import stream_turn
from kgent.permissions import Mode, Scoped
from kgent.providers.base import CONTEXT_OVERFLOW, Provider, ProviderRequest, ToolSchema
from kgent.providers.pricing import builtin_prices
from kgent.session.entries import SessionEntry, SessionInfo, new_entry
from kgent.tools.base import ChangeTracking, CommandRunner, Tool
from kgent.tools.todo import latest_plan

if TYPE_CHECKING:
    from kgent.kernel.kernel import AgentKernel

log = logging.getLogger("kgent.kernel")


@dataclass(slots=True, kw_only=True)
class RunSpec:
    """What `create_run` was asked for."""

    prompt: str
    images: tuple[ImagePart, ...] = ()  # attached to the prompt (already checked)
    workspace: Path
    mode: Mode
    provider: Provider
    session_id: str
    resume: bool
    parent_entry_id: str | None = None
    cost_limit: float | None = (
        None  # US dollars; the run fails (cost_limit) before a model call would pass it
    )
    hook_context: HookContext
    max_turns: int | None = None  # None: KernelConfig.max_turns
    fs: FileOps | None = None  # this run's file access (an editor's buffers); None: the kernel's
    runner: CommandRunner | None = (
        None  # where this run's commands run (an ACP client's terminal); None: the kernel's
    )
    origin: SubRunOrigin | None = None  # set for a sub-agent's run (the `task` tool)
    tools: tuple[Tool, ...] | None = None  # None: the kernel's tools
    typed: str | None = None  # what the user typed, when `prompt` is its expansion (a slash command)
    diagnostics: DiagnosticSource | None = None  # the host's; None: the language servers Kgent runs (if any)
    instructions: str = (
        ""  # a defined sub-agent's own instructions, after the system prompt (kgent.context.agents)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SubRunOrigin:
    """Where a sub-agent's run comes from: it starts afresh (its history is its prompt) on a branch of its own off
    `parent_entry_id`, records changes in its parent's tracker, and compacts only its own part of the branch."""

    parent_run_id: str
    parent_tool_call_id: str
    agent: str
    depth: int  # 1 for a sub-agent of a top-level run
    tracker: ChangeTracking


@dataclass(slots=True)
class LoopState:
    history: list[Message] = field(default_factory=list)
    leaf_id: str | None = None
    turns: int = 0
    last_text: str = ""
    stop_reason: str = "end"
    stored_leaf: str | None = (
        None  # the last entry known to be in the store (where a sub-agent's branch starts)
    )


class Loop:
    """One run's loop; `__call__` is the body AgentRun executes and returns the run's result."""

    def __init__(self, kernel: AgentKernel, spec: RunSpec) -> None:
        self.kernel = kernel
        self.spec = spec
        self.state = LoopState()
        self.permission_count = 0
        self.subagents_started = 0
        self._has_images = ImageScan()  # asked before every request
        # the rule files' allows as they were before one of this run's own tool calls changed a rule file (or the
        # trust list): from then on that configuration takes effect only in a later run; None while no call has
        # (the files are read live, so a person's edit counts at once). Denies are always read live: they narrow.
        self.file_allows: list[Scoped] | None = None
        tools = spec.tools if spec.tools is not None else kernel.tools
        self.tools = {t.name: t for t in tools}
        self.arguments = ArgumentChecks()
        self.arguments.add(tools, known=kernel.arguments)
        self.fs: FileOps = spec.fs or kernel.fs
        self.runner: CommandRunner = spec.runner or kernel.runner
        source = spec.diagnostics or kernel.language_servers(spec.session_id, spec.workspace)
        self.diagnostics = RunDiagnostics(source, self.fs, spec.workspace) if source is not None else None
        self.schemas = tuple(
            ToolSchema(name=t.name, description=t.description, parameters=t.parameters) for t in tools
        )
        self.system_prompt = ""  # set when the session is open: it carries the session's date
        self.resources = RunResources(
            spec.workspace, (), enabled=False
        )  # the real one when the session is open
        self.overhead = 0  # estimated tokens of the system prompt and the tool schemas
        self.compaction: RunCompaction | None = None
        self.tracking: asyncio.Future[None] | None = None  # the change tracker's start
        prices = kernel.config.prices or builtin_prices()
        # the model's window: the usage events' `context`, and this run's compaction
        self.context_settings = CompactionSettings.resolve(
            kernel.config, spec.provider.name, spec.provider.model
        )
        window = self.context_settings.context_window
        self.cost = RunCost(prices.price(spec.provider.model), spec.cost_limit, window=window)

    def _start_context(self, info: SessionInfo, branch: Sequence[SessionEntry]) -> None:
        """The session's system prompt and this run's compaction. The prompt's date is the session's creation day
        and its skills those the branch recorded first, so every request of the session, resumed or not, starts
        with the same bytes (prompt caches hit)."""
        kernel, spec = self.kernel, self.spec
        day = info.created[:10]
        self.resources = RunResources(
            spec.workspace,
            branch,
            enabled=kernel.config.resources,
            extra_skill_dirs=[
                *kernel.config.skill_dirs,
                *extension_skill_dirs(kernel.hooks, spec.hook_context),
            ],
        )
        self.system_prompt = kernel.config.system_prompt or system_prompt(
            str(spec.workspace), self.schemas, day=day, skills=self.resources.prompt_skills
        )
        if spec.instructions:
            self.system_prompt = f"{self.system_prompt}\n\n{spec.instructions}"
        self.overhead = estimate_overhead(self.system_prompt, self.schemas)
        if kernel.compactor is not None:  # a sub-agent's run too: it compacts its own part of the branch
            self.compaction = kernel.compactor.for_run(
                RunContext(
                    store=kernel.store,
                    session_id=spec.session_id,
                    provider=spec.provider,
                    settings=self.context_settings,
                    auto=kernel.config.auto_compact,
                    overhead=self.overhead,
                    project=kernel.project,
                )
            )

    async def __call__(self, run: AgentRun) -> RunResult:
        origin = self.spec.origin
        # A sub-run's changes are its parent's: the parent's tracker records and reports them (and its review).
        tracker: ChangeTracking = (
            origin.tracker
            if origin
            else RunReview(
                self.kernel.change_tracker(self.spec.workspace), self.fs, self.spec.workspace, run.run_id
            )
        )
        status: RunStatus = "failed"
        error: dict[str, str] | None = None
        run.cost = self.cost  # its parent's cost limit sees what a sub-run spends while it runs
        try:
            await self._open_session(run)  # first: a cancel from here on still leaves the host a session
            if (
                origin is None
            ):  # the baseline is taken while the first model call streams; tools wait for it (_turns)
                self.tracking = asyncio.ensure_future(tracker.start())
            status, error = await self._turns(run, tracker)
        except asyncio.CancelledError:
            # run.cancel() or the host's loop shutting down: either way the run ends cancelled, with its run_end
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            status, self.state.stop_reason = "cancelled", "cancelled"
        except KgentError as exc:
            status, error = "failed", {"code": exc.code, "message": exc.message}
            self.state.stop_reason = "error"
        except Exception as exc:  # a bug: report it as the run's failure, never as a silent hang
            status, error = "failed", {"code": "kernel_error", "message": f"{type(exc).__name__}: {exc}"}
            self.state.stop_reason = "error"
        run.close_input()  # no await since the loop last looked at the queues: nothing queued is lost unseen
        if origin is None:  # its background commands end with the run, unless a cancel asked to keep them
            await self.kernel.end_background(
                self.spec.session_id, keep=status == "cancelled" and not run.stop_background
            )
        try:
            if self.tracking is not None:
                await self.tracking
            changed, patch = await tracker.finish() if origin is None else ((), "")
        except Exception as exc:  # the patch is a report; failing to make it must not lose the result
            changed, patch = (), f"# kgent could not compute the patch: {type(exc).__name__}: {exc}\n"
        review = tracker.entry_data() if isinstance(tracker, RunReview) else None
        if review is not None:  # before run_end: a host may ask for the review as soon as the run has ended
            try:
                await self.persist([self.entry("review", **review)])
            except KgentError:
                pass  # the run's result stands; its changes are in the patch
        result = RunResult(
            run_id=run.run_id,
            session_id=self.spec.session_id,
            status=status,
            stop_reason=self.state.stop_reason,
            text=self.state.last_text,
            error=error,
            changed_paths=changed,
            patch=patch,
            usage=self.cost.wire(),
            turns=self.state.turns,
        )
        await self._extra_entries(result)
        return result

    async def _extra_entries(self, result: RunResult) -> None:
        """Append the entries the `on_run_end` hooks give (once the session exists; a failure is logged)."""
        extra = await run_end_entries(self.kernel.hooks, self.spec.hook_context, result)
        if extra and self.state.leaf_id is not None:
            try:
                await self.persist([self.entry(e.type, **e.data) for e in extra])
            except KgentError as exc:
                log.warning("could not store the entries of an on_run_end hook: %s", exc.message)

    async def _open_session(self, run: AgentRun) -> None:
        spec, store = self.spec, self.kernel.store
        plan = None
        own: Sequence[SessionEntry] = ()  # the resumed branch as its agent sees it
        if spec.origin is not None:
            info = await self._open_sub_run(run.run_id, spec.origin)
        elif spec.resume:
            tree = await store.load(spec.session_id)
            info = tree.info
            leaf = spec.parent_entry_id if spec.parent_entry_id is not None else tree.leaf_id
            if leaf is not None and leaf not in tree.entries:
                raise KgentError(f"no entry {leaf!r} in session {spec.session_id}", code="entry_not_found")
            self.state.leaf_id = self.state.stored_leaf = leaf
            branch = tree.branch(leaf)
            own = own_context(branch)
            plan = latest_plan(e.data["message"] for e in branch if e.type == "message")
            self.state.history = self.kernel.project(branch)
            self.kernel.restore_rules(spec.session_id, branch)
            config = self._config()
            last = next((e.data for e in reversed(branch) if e.type == "config"), None)
            if last is None or any(last.get(k) != v for k, v in config.items()):
                await self.persist([self.entry("config", **config)])  # a resume that changed mode or model
        else:
            # Shielded: once the host has the session id, a cancel must not leave it without a session.
            creating = asyncio.ensure_future(self._create_session())
            try:
                info = await asyncio.shield(creating)
            except asyncio.CancelledError:
                await creating
                raise
        await self._add_run_tools()
        self._start_context(info, own)
        run.emit(
            RunStart(
                run_id=run.run_id,
                session_id=spec.session_id,
                workspace=str(spec.workspace),
                mode=spec.mode,
                provider=spec.provider.name,
                model=spec.provider.model,
                prompt=spec.prompt,
                parent_run_id=spec.origin.parent_run_id if spec.origin else None,
                parent_tool_call_id=spec.origin.parent_tool_call_id if spec.origin else None,
                agent=spec.origin.agent if spec.origin else None,
            )
        )
        if plan:  # a resumed branch's plan, so the host shows it again
            run.emit(PlanEvent(entries=plan))
        await self._add_resources(run)
        await self._add_user(run, spec.prompt, "prompt", spec.images, typed=spec.typed)

    async def _add_resources(self, run: AgentRun) -> None:
        """Record the skills and instruction files this run opens with (only what the branch does not know yet):
        on a new session the instructions are the first message, on a resumed one a change comes after the history."""
        skills = self.resources.skills_entry()
        if skills is not None:
            await self.persist([self.entry(SKILLS, **skills)])
            if not skills.get("inPrompt"):
                self.state.history.append(InstructionsMessage(text=changed_note(self.resources.skills)))
        await self._add_instructions(run, self.resources.opening())

    async def _add_instructions(self, run: AgentRun, found: Found | None) -> None:
        if found is None:
            return
        entry = self.entry(INSTRUCTIONS, **found.data)
        await self.persist([entry])
        if found.files:  # files the gate refused are only named in the event: the model gets nothing of them
            self.state.history.append(InstructionsMessage(text=render(found.files)))
        run.emit(found.event(entry.id))

    async def _add_run_tools(self) -> None:
        """The tools the hooks add for this run (MCP servers, extensions); the kernel's own names win."""
        added = [
            t for t in await self.kernel.hooks.run_tools(self.spec.hook_context) if t.name not in self.tools
        ]
        self.tools.update((t.name, t) for t in added)
        self.arguments.add(added)
        self.schemas += tuple(
            ToolSchema(name=t.name, description=t.description, parameters=t.parameters) for t in added
        )

    async def _open_sub_run(self, run_id: str, origin: SubRunOrigin) -> SessionInfo:
        """A sub-agent's start: its `subrun` entry off the parent's last stored entry; no history before its prompt."""
        info = (await self.kernel.store.load(self.spec.session_id)).info
        self.state.leaf_id = self.spec.parent_entry_id
        marker = self.entry(
            "subrun",
            runId=run_id,
            parentRunId=origin.parent_run_id,
            toolCallId=origin.parent_tool_call_id,
            agent=origin.agent,
            tools=list(self.tools),
        )
        await self.persist([marker])
        return info

    def _config(self) -> dict[str, str]:
        spec = self.spec
        return {"mode": spec.mode, "provider": spec.provider.name, "model": spec.provider.model}

    async def _create_session(self) -> SessionInfo:
        info = await self.kernel.store.create(
            workspace=str(self.spec.workspace), session_id=self.spec.session_id
        )
        await self.persist([new_entry("config", None, **self._config())])
        return info

    async def persist(self, entries: list[SessionEntry]) -> None:
        """Append entries (already chained from the current leaf) as one durable batch."""
        if entries:
            await self.kernel.store.append(self.spec.session_id, entries)
            self.state.leaf_id = self.state.stored_leaf = entries[-1].id

    def entry(self, type: str, **data: Any) -> SessionEntry:
        """A new entry chained after the current leaf (call `persist` to store it)."""
        e = new_entry(type, self.state.leaf_id, **data)
        self.state.leaf_id = e.id
        return e

    async def _add_user(
        self,
        run: AgentRun,
        text: str,
        source: InputSource,
        images: tuple[ImagePart, ...] = (),
        *,
        typed: str | None = None,
    ) -> None:
        for image in images:  # each image once, by hash, beside the session file; the entry names it
            await self.kernel.store.put_blob(self.spec.session_id, image.data)
        message = UserMessage(text=text, images=images)
        self.state.history.append(message)
        extra = {"typed": typed} if typed is not None else {}
        entry = self.entry("message", message=message_to_dict(message), **extra)
        await self.persist([entry])
        shown = tuple(i.to_dict() for i in images) or None
        run.emit(UserInput(text=text, source=source, entry_id=entry.id, images=shown))

    async def _turns(self, run: AgentRun, tracker: ChangeTracking) -> tuple[RunStatus, dict[str, str] | None]:
        max_turns = self.spec.max_turns or self.kernel.config.max_turns
        while self.state.turns < max_turns:
            if self.compaction is not None:  # first: a compacted context costs less
                history, leaf = self.state.history, self.state.leaf_id
                await self._apply(run, await self.compaction.before_request(history, leaf, run.emit))
            if self.spec.origin is not None:  # what is left for it now: its siblings of the turn spend too
                self.cost.limit = shared_limit(run)
            over_budget = self.cost.check(self.state.history, self.overhead)
            if over_budget is not None:
                self.state.stop_reason = "cost_limit"
                return "failed", over_budget
            self.state.turns += 1
            message = await self._model_turn(run)
            if message.stop_reason in ("error", "aborted"):
                self.state.stop_reason = message.stop_reason
                return "failed", {
                    "code": message.error_code or "provider_error",
                    "message": message.error or "the model call failed",
                }
            if message.tool_calls:
                if self.tracking is not None:
                    await self.tracking  # the baseline before any tool can change a file
                results = await ToolBatch(self, run, tracker).execute(message.tool_calls)
                self.state.history.extend(results)
                # the instructions of the directories these calls touched, right after their results
                await self._add_instructions(
                    run, self.resources.touched(self.tools, message.tool_calls, results)
                )
                for text in run.take_steering():
                    await self._add_user(run, text, "steer")
                continue
            steering = run.take_steering()
            for text in steering:
                await self._add_user(run, text, "steer")
            if steering:
                continue
            follow_up = run.take_follow_up()
            for text in follow_up:
                await self._add_user(run, text, "follow_up")
            if follow_up:
                continue
            self.state.stop_reason = message.stop_reason
            return "settled", None
        self.state.stop_reason = "max_turns"
        return "failed", {"code": "max_turns", "message": f"The run exceeded {max_turns} model turns."}

    async def _model_turn(self, run: AgentRun) -> AssistantMessage:
        compaction = self.compaction
        message = await self._stream_turn(run)
        if message.error_code == CONTEXT_OVERFLOW and compaction is not None:
            checkpoint = await compaction.on_overflow(self.state.history, self.state.leaf_id, run.emit)
            if await self._apply(run, checkpoint):  # compacted: retry the turn once
                message = await self._stream_turn(run)
        return await self._finish_turn(run, message)

    async def _apply(self, run: AgentRun, checkpoint: Compaction | None) -> bool:
        """Persist a compaction's checkpoint and continue from its history; False when there was none or it
        could not be stored (the run then goes on uncompacted)."""
        if checkpoint is None or self.compaction is None:
            return False
        error = None
        try:
            await self.persist([checkpoint.entry])
        except KgentError as exc:
            error = exc.message
        else:
            self.state.history = list(checkpoint.history)
        run.emit(self.compaction.settle(checkpoint, error))
        return error is None

    async def _messages(self) -> tuple[Message, ...]:
        """The history a request carries: images of a resumed or compacted history read back from the session's
        blobs; for a model that sees none, a note in their place."""
        if not self._has_images(self.state.history):  # the common case: nothing to fill in or leave out
            return tuple(self.state.history)
        sid, store = self.spec.session_id, self.kernel.store
        filled = await with_image_data(self.state.history, lambda sha: store.get_blob(sid, sha))
        if filled is not None:
            self.state.history = filled
        prices = self.kernel.config.prices or builtin_prices()
        if not sees_images(self.spec.provider, prices):
            return without_images(self.state.history, self.spec.provider.model)
        return tuple(self.state.history)

    async def _stream_turn(self, run: AgentRun) -> AssistantMessage:
        request = ProviderRequest(
            system_prompt=self.system_prompt,
            messages=await self._messages(),
            tools=self.schemas,
            model=self.spec.provider.model,
            max_tokens=self.kernel.config.max_tokens,
            cache_key=self.spec.session_id,
        )
        hooked = await hooked_request(self.kernel.hooks, self.spec.hook_context, request)
        if isinstance(hooked, AssistantMessage):  # a failing before_model_request hook fails the turn
            return hooked
        return await stream_turn(self.spec.provider, hooked, run.emit)

    async def _finish_turn(self, run: AgentRun, message: AssistantMessage) -> AssistantMessage:
        if message.stop_reason not in ("error", "aborted"):  # a failed turn stays out of the history
            self.state.history.append(message)
            entry = self.entry("message", message=message_to_dict(message))
            await self.persist([entry])
        else:
            entry = None
        self.state.last_text = message.text or self.state.last_text
        run.emit(MessageEnd(message=message, entry_id=entry.id if entry else None))
        if message.usage is not None:
            run.emit(self.cost.add(message.usage))
        return message

    def tool_result_entries(self, results: list[ToolResultMessage]) -> list[SessionEntry]:
        return [self.entry("message", message=message_to_dict(r)) for r in results]


def shared_limit(run: AgentRun) -> float | None:
    """A sub-agent's cost limit now: its parent's (a sub-run's own, in turn, shared) less what the parent and its other
    live sub-runs have spent, so the sub-agents of one turn, running side by side, together stay within the limit
    their parent had; a top-level run's own limit."""
    parent = run.parent
    if parent is None:
        return run.cost.limit if run.cost is not None else None
    limit = shared_limit(parent)
    return None if limit is None else limit - (parent.spending() - run.spending())
