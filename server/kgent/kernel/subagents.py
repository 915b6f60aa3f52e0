"""SubAgents: the kernel's side of the `task` tool — starts a sub-agent's run within limits and relays its events.

A sub-run is an AgentRun of the same session on a branch of its own (kernel/loop.py, SubRunOrigin). Its events reach
the host through the parent's stream as `SubRunEvent`s, its prompts are answered through the parent run
(`AgentRun.adopt`), and cancelling the parent's tool call cancels it and waits for its end.

A sub-agent people defined (the call's `agent`, kgent.context.agents) is read from disk when the call starts: its
tools (of which the call's `tools` may pick some, never more), the narrower of its mode and its parent's, its model
on the parent's provider, and its instructions after its system prompt (docs/agents.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from kgent.context.agents import AgentDefinition, defined, instructions_section, narrower, resolve_tools
from kgent.core.events import SubRunEvent, ToolUpdate
from kgent.kernel.loop import Loop, RunSpec, SubRunOrigin
from kgent.kernel.run import AgentRun
from kgent.permissions import Mode
from kgent.providers.base import Provider, ProviderRequest, StreamDone, StreamEvent
from kgent.providers.pricing import builtin_prices
from kgent.tools.base import ChangeTracking, SubAgentError, SubTask, SubTaskResult

if TYPE_CHECKING:
    from kgent.kernel.kernel import AgentKernel

READ_ONLY_DEFAULT = ("read", "grep", "find", "ls")
TASK_TOOL = "task"
# Providers that answer with the model a request names (ProviderRequest.model): the built-in HTTP ones send it as the
# vendor's `model`, on the same connection and key; the scripted one plays its script for any model. Another (an
# extension's) may ignore it, so a definition's `model` is not followed there: its sub-agent runs on the parent's.
PER_REQUEST_MODEL = frozenset({"openai", "anthropic", "scripted"})


class SubAgents:
    """The `SubAgentRunner` of one tool call (`call_id`) of `run`."""

    def __init__(
        self, kernel: AgentKernel, loop: Loop, run: AgentRun, tracker: ChangeTracking, call_id: str
    ) -> None:
        self.kernel, self.loop, self.parent, self.tracker, self.call_id = kernel, loop, run, tracker, call_id
        origin = loop.spec.origin
        self.depth = (origin.depth if origin else 0) + 1  # the depth a sub-agent started here would have

    def allowed_tools(self) -> tuple[str, ...]:
        """What a sub-agent may be given: its parent's tools; `task` only while it could still nest."""
        return tuple(name for name in self.loop.tools if name != TASK_TOOL or self._may_nest())

    def default_tools(self) -> tuple[str, ...]:
        return tuple(name for name in READ_ONLY_DEFAULT if name in self.loop.tools)

    def _may_nest(self) -> bool:
        return self.depth < self.kernel.config.max_subagent_depth

    def definition(self, name: str) -> AgentDefinition:
        """The definition called `name` for the parent's workspace (read now); SubAgentError naming the known ones
        (and those left out, with why) when there is none."""
        found, skipped = defined(self.loop.spec.workspace)
        match = next((d for d in found if d.name == name.lower()), None)  # names are lower-case
        if match is not None:
            return match
        known = ", ".join(d.name for d in found) or "none is defined (.kgent/agents/NAME.md)"
        left = "; left out: " + "; ".join(f"{s.path} ({s.reason})" for s in skipped) if skipped else ""
        raise SubAgentError(f"task_agent: there is no sub-agent {name!r}; defined here: {known}{left}")

    def _tools(self, task: SubTask, definition: AgentDefinition | None) -> Sequence[str]:
        """The tools asked for: the call's, else its definition's, else the read-only default. A definition's names
        must all be tools of this run, and the call's `tools` may only pick some of them."""
        if definition is None or definition.tools is None:
            return task.tools if task.tools is not None else self.default_tools()
        own, unknown = resolve_tools(definition.tools, self.loop.tools)
        if unknown:
            raise SubAgentError(
                f"task_agent: the sub-agent {definition.name!r} ({definition.path}) lists tools this run does not "
                f"have: {', '.join(unknown)}; its tools are {', '.join(self.loop.tools) or '(none)'}"
            )
        if not self._may_nest():  # a definition does not make nesting deeper than the kernel allows
            own = [n for n in own if n != TASK_TOOL]
        if task.tools is None:
            return own
        wider = [n for n in task.tools if n not in own]
        if wider:
            raise SubAgentError(
                f"task_tools: the sub-agent {definition.name!r} may have only {', '.join(own) or '(none)'}; "
                f"`tools` can narrow that, not add {', '.join(wider)}"
            )
        return task.tools

    def _check(self, task: SubTask, definition: AgentDefinition | None = None) -> tuple[str, ...]:
        config = self.kernel.config
        if self.depth > config.max_subagent_depth:
            raise SubAgentError(
                f"task_depth: sub-agents may nest {config.max_subagent_depth} level(s) deep; "
                "this one cannot start another — do the work with your own tools"
            )
        names = self._tools(task, definition)
        if TASK_TOOL in names and self.depth >= config.max_subagent_depth:
            raise SubAgentError(
                f"task_depth: sub-agents may nest {config.max_subagent_depth} level(s) deep, "
                "so this sub-agent may not have the task tool"
            )
        allowed = self.allowed_tools()
        refused = [n for n in names if n not in allowed]
        if refused:
            raise SubAgentError(
                f"task_tools: a sub-agent here may not have {', '.join(refused)}; "
                f"choose from {', '.join(allowed) or '(none)'}"
            )
        if not names:
            raise SubAgentError("task_tools: give the sub-agent at least one tool")
        if self.loop.subagents_started >= config.max_subagents:
            raise SubAgentError(
                f"task_limit: this run has already started {config.max_subagents} sub-agents, the most one run may"
            )
        return tuple(dict.fromkeys(names))

    def _mode(self, definition: AgentDefinition | None) -> Mode:
        """The parent's mode, or the narrower of it and the definition's (kgent.context.agents.narrower)."""
        parent = self.loop.spec.mode
        return narrower(parent, definition.mode) if definition and definition.mode else parent

    def _provider(self, definition: AgentDefinition | None) -> Provider:
        """The parent's provider, asked for the definition's model when it names one. A project's `model` counts
        only once the project is trusted (like its rule files' allows: an untrusted project only narrows); a run
        with a cost limit needs the model's price, or the limit could not bound it."""
        provider = self.loop.spec.provider
        if definition is None or not definition.model or definition.model == provider.model:
            return provider
        if provider.name not in PER_REQUEST_MODEL:
            return provider
        workspace = self.loop.spec.workspace
        if definition.source == "project" and not self.kernel.rules.files.is_trusted(workspace):
            return provider
        prices = self.kernel.config.prices or builtin_prices()
        if self.loop.cost.limit is not None and prices.price(definition.model) is None:
            raise SubAgentError(
                f"task_agent: the sub-agent {definition.name!r} runs on model {definition.model!r}, whose price "
                "the price table does not know, and this run has a cost limit; use another sub-agent or none"
            )
        return OnModel(provider, definition.model)

    async def run(self, task: SubTask) -> SubTaskResult:
        definition = self.definition(task.definition) if task.definition is not None else None
        names = self._check(task, definition)
        provider = self._provider(definition)
        loop, parent = self.loop, self.parent
        loop.subagents_started += 1
        child = AgentRun(run_id="run-" + os.urandom(6).hex(), session_id=parent.session_id)
        spec = RunSpec(
            prompt=task.prompt,
            workspace=loop.spec.workspace,
            mode=self._mode(definition),
            provider=provider,
            session_id=loop.spec.session_id,
            resume=True,
            parent_entry_id=loop.state.stored_leaf,
            cost_limit=loop.cost.remaining,
            origin=SubRunOrigin(
                parent_run_id=parent.run_id,
                parent_tool_call_id=self.call_id,
                agent=task.agent,
                depth=self.depth,
                tracker=self.tracker,
            ),
            tools=tuple(loop.tools[n] for n in names),
            hook_context=loop.spec.hook_context,
            max_turns=loop.spec.max_turns,
            fs=loop.fs,  # the parent's file access: an editor's buffers stay the sub-agent's files too
            runner=loop.runner,
            diagnostics=loop.spec.diagnostics,
            instructions=instructions_section(definition) if definition else "",
        )
        parent.adopt(child)
        # The sub-run's id on the parent's own stream, before any of its events: a front that reads the parent's
        # stream only (the web client's session stream) follows the sub-run's from here (protocol.md § Sub-agents).
        parent.emit(
            ToolUpdate(
                tool_call_id=self.call_id,
                status="in_progress",
                details={"runId": child.run_id, "agent": task.agent},
            )
        )
        child._start(Loop(self.kernel, spec))
        # The relay is a task of its own so that a cancel of this call does not cut it: the sub-run, cancelled in
        # turn, still reports its end (its run_end) to the host before the call's own final update.
        relay = asyncio.ensure_future(self._relay(child))
        try:
            await asyncio.shield(relay)
        except asyncio.CancelledError:
            child.cancel()
            await relay
            raise
        finally:
            parent.disown(child)
            if not child.done:  # the relay failed (a bug): the sub-run must not outlive the call
                child.cancel()
            result = await child.result()  # ended (the relay saw its last event): this does not wait
            parent.emit(
                loop.cost.absorb(result.usage)
            )  # the parent's usage and cost limit include its sub-agents'
        error = result.error["message"] if result.error else None
        return SubTaskResult(
            run_id=child.run_id, status=result.status, text=result.text, error=error, turns=result.turns
        )

    async def _relay(self, child: AgentRun) -> None:
        parent = self.parent
        async for event in child:
            if isinstance(event, SubRunEvent):  # from a sub-agent of the sub-agent: already names its run
                parent.emit(event)
            else:
                parent.emit(SubRunEvent(run_id=child.run_id, parent_run_id=parent.run_id, event=event))


class OnModel:
    """The parent's provider asked for another model (one of PER_REQUEST_MODEL): the same client, connection, base
    URL and key, each request naming `model`, and its answers said to be that model's (the providers' decoders name
    their own). Not closed here: the parent's provider has an owner."""

    def __init__(self, inner: Provider, model: str) -> None:
        self.inner, self.name, self.model = inner, inner.name, model

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        async for event in self.inner.stream(dataclasses.replace(request, model=self.model)):
            if isinstance(event, StreamDone) and event.message.model != self.model:
                event = StreamDone(dataclasses.replace(event.message, model=self.model))
            yield event

    async def aclose(self) -> None:
        return None
