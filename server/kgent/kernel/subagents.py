"""SubAgents: the kernel's side of the `task` tool — starts a sub-agent's run within limits and relays its events.

A sub-run is an AgentRun of the same session on a branch of its own (kernel/loop.py, SubRunOrigin). Its events reach
the host through the parent's stream as `SubRunEvent`s, its prompts are answered through the parent run
(`AgentRun.adopt`), and cancelling the parent's tool call cancels it and waits for its end.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING

from kgent.core.events import SubRunEvent
from kgent.kernel.loop import Loop, RunSpec, SubRunOrigin
from kgent.kernel.run import AgentRun
from kgent.tools.base import ChangeTracking, SubAgentError, SubTask, SubTaskResult

if TYPE_CHECKING:
    from kgent.kernel.kernel import AgentKernel

READ_ONLY_DEFAULT = ("read", "grep", "find", "ls")
TASK_TOOL = "task"


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
        nest = self.depth < self.kernel.config.max_subagent_depth
        return tuple(name for name in self.loop.tools if name != TASK_TOOL or nest)

    def default_tools(self) -> tuple[str, ...]:
        return tuple(name for name in READ_ONLY_DEFAULT if name in self.loop.tools)

    def _check(self, task: SubTask) -> tuple[str, ...]:
        config = self.kernel.config
        if self.depth > config.max_subagent_depth:
            raise SubAgentError(
                f"task_depth: sub-agents may nest {config.max_subagent_depth} level(s) deep; "
                "this one cannot start another — do the work with your own tools"
            )
        names = task.tools if task.tools is not None else self.default_tools()
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

    async def run(self, task: SubTask) -> SubTaskResult:
        names = self._check(task)
        loop, parent = self.loop, self.parent
        loop.subagents_started += 1
        child = AgentRun(run_id="run-" + uuid.uuid4().hex[:12], session_id=parent.session_id)
        spec = RunSpec(
            prompt=task.prompt,
            workspace=loop.spec.workspace,
            mode=loop.spec.mode,
            provider=loop.spec.provider,
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
        )
        parent.adopt(child)
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
