"""AgentRun: one run's control surface (events, steer, follow-up, cancel, permissions) and its one result.

The run starts when it is created and ends in exactly one terminal state: settled, cancelled or failed. Its events
go to one consumer, in order; the last one is always `run_end`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from kgent.core.errors import RunStateError
from kgent.core.events import Event, PermissionAnswer, QueueUpdate, RunResult
from kgent.core.messages import Usage
from kgent.kernel.cost import RunCost, usage_to_wire

_DONE: Any = object()


class AgentRun:
    """Drive and observe one run. Create it with `AgentKernel.create_run` (or `compact_run`); it is already running."""

    def __init__(self, run_id: str, session_id: str, observer: Callable[[Event], None] | None = None) -> None:
        self.run_id = run_id
        self._observer = observer  # sees every event emitted by the loop (the kernel's on_event hooks)
        self.session_id = session_id
        self._events: asyncio.Queue[Any] = asyncio.Queue()
        self._steering: list[str] = []
        self._follow_up: list[str] = []
        self._pending: dict[str, asyncio.Future[PermissionAnswer]] = {}
        self._result: asyncio.Future[RunResult] = asyncio.get_running_loop().create_future()
        self._consumed = False
        self._cancel_requested = False
        self.stop_background = False  # a cancel asked to stop the session's background commands too
        self._accepting = True  # steer/follow_up still reach the model
        self._task: asyncio.Task[None] | None = None
        self._started = False
        self._children: dict[str, AgentRun] = {}  # live sub-agent runs (the `task` tool), by run id
        self.parent: AgentRun | None = None  # a sub-agent's run: the run whose `task` call started it
        self.cost: RunCost | None = None  # what the run has spent (its loop's ledger, once the loop runs)

    # -- driven by the loop ------------------------------------------------------------------------------------
    def _start(self, body: Callable[[AgentRun], Awaitable[RunResult]]) -> None:
        self._task = asyncio.get_running_loop().create_task(self._main(body), name=f"kgent-run-{self.run_id}")

    async def _main(self, body: Callable[[AgentRun], Awaitable[RunResult]]) -> None:
        self._started = True
        if (
            self._cancel_requested
        ):  # cancelled before the task ran: let the loop end it (and keep the session)
            current = asyncio.current_task()
            if current is not None:
                current.cancel()
        try:
            result = await body(self)
        except (Exception, asyncio.CancelledError) as exc:  # a bug in the loop: one run_end all the same
            result = RunResult(
                run_id=self.run_id,
                session_id=self.session_id,
                status="failed",
                stop_reason="error",
                text="",
                error={"code": "kernel_error", "message": f"{type(exc).__name__}: {exc}"},
                usage=usage_to_wire(Usage(), None),
            )
        finally:
            for fut in self._pending.values():
                fut.cancel()
            self._pending.clear()
        self._events.put_nowait(result.to_event())
        self._events.put_nowait(_DONE)
        self._result.set_result(result)

    def emit(self, event: Event) -> None:
        if self._observer is not None:
            self._observer(event)
        self._events.put_nowait(event)

    def take_steering(self) -> list[str]:
        taken, self._steering = self._steering, []
        if taken:
            self._emit_queue()
        return taken

    def take_follow_up(self) -> list[str]:
        taken, self._follow_up = self._follow_up, []
        if taken:
            self._emit_queue()
        return taken

    def close_input(self) -> None:
        """The loop will not read the queues again (it is finishing): later steer/follow_up calls are refused,
        not silently dropped."""
        self._accepting = False

    def open_permission(self, request_id: str) -> asyncio.Future[PermissionAnswer]:
        fut: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = fut
        return fut

    def close_permission(self, request_id: str) -> None:
        self._pending.pop(request_id, None)

    @property
    def cancel_requested(self) -> bool:
        return self._cancel_requested

    def adopt(self, child: AgentRun) -> None:
        """`child` is a sub-agent's run of this one until `disown`: its prompts are answered through this run, and
        what it spends counts in `spending` (the sub-runs of one turn share what is left of the cost limit)."""
        child.parent = self
        self._children[child.run_id] = child

    def spending(self) -> float:
        """US dollars this run and its live sub-agents' runs have spent so far (an ended sub-run's spending is in
        this run's own from the moment it is disowned)."""
        own = self.cost.spent if self.cost is not None else 0.0
        return own + sum(c.spending() for c in self._children.values())

    def disown(self, child: AgentRun) -> None:
        self._children.pop(child.run_id, None)

    def sub_run(self, run_id: str) -> AgentRun | None:
        """A live sub-agent run of this run (at any depth), by id."""
        for child in self._children.values():
            found = child if child.run_id == run_id else child.sub_run(run_id)
            if found is not None:
                return found
        return None

    # -- the host's side ---------------------------------------------------------------------------------------
    def __aiter__(self) -> AsyncIterator[Event]:
        if self._consumed:
            raise RunStateError("an AgentRun's events have exactly one consumer")
        self._consumed = True
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        while True:
            event = await self._events.get()
            if event is _DONE:
                return
            yield event

    @property
    def done(self) -> bool:
        return self._result.done()

    @property
    def pending_permissions(self) -> tuple[str, ...]:
        """Open prompts of this run and of its sub-agents' runs."""
        return tuple(self._pending) + tuple(p for c in self._children.values() for p in c.pending_permissions)

    def steer(self, text: str) -> None:
        """Deliver `text` to the model after the current tool batch (before its next request)."""
        self._check_accepting()
        self._steering.append(text)
        self._emit_queue()

    def follow_up(self, text: str) -> None:
        """Deliver `text` when the run would otherwise settle; the run then goes on."""
        self._check_accepting()
        self._follow_up.append(text)
        self._emit_queue()

    def clear_queue(self) -> None:
        """Drop the queued steering and follow-up messages the model has not seen yet (a `queue_update` says so)."""
        if self.done:
            raise RunStateError(
                f"run {self.run_id} has ended; start a new run with its session", code="run_not_live"
            )
        self._steering, self._follow_up = [], []
        self._emit_queue()

    def cancel(self, *, stop_background: bool = False) -> None:
        """Stop the run: the model stream is closed, running tools are killed, queued messages dropped. The
        session's background commands go on (the person may still want the server it started) unless
        `stop_background`.

        Once the loop has finished (it is only computing the patch for run_end) there is nothing left to stop: the
        run ends with the status it already reached, its patch complete."""
        if self.done:
            return
        self.stop_background = self.stop_background or stop_background
        if self._cancel_requested:
            return
        self._cancel_requested = True
        # a task cancelled before its first step runs none of its code (no run_end): _main cancels itself instead
        if self._task is not None and self._accepting and self._started:
            self._task.cancel()

    def resolve_permission(self, request_id: str, option_id: str, new_text: str | None = None) -> bool:
        """Answer a `permission_request` (this run's or one of its sub-agents'). An unknown option counts as a reject;
        `new_text` (an allowed edit-kind call only) is the whole file the user wants instead of the proposal.
        False if the id is not pending."""
        fut = self._pending.pop(request_id, None)
        if fut is None:
            return any(
                c.resolve_permission(request_id, option_id, new_text) for c in list(self._children.values())
            )
        if fut.done():
            return False
        fut.set_result(PermissionAnswer(option_id, new_text))
        return True

    async def result(self) -> RunResult:
        return await asyncio.shield(self._result)

    def add_done_callback(self, fn: Callable[[RunResult], None]) -> None:
        """Call `fn(result)` on the run's event loop once the run has ended (at once if it already has)."""
        self._result.add_done_callback(lambda fut: fn(fut.result()))

    def _check_accepting(self) -> None:
        if self.done or not self._accepting:
            raise RunStateError(
                f"run {self.run_id} has ended; start a new run with its session", code="run_not_live"
            )

    def _emit_queue(self) -> None:
        self._events.put_nowait(QueueUpdate(steering=tuple(self._steering), follow_up=tuple(self._follow_up)))
