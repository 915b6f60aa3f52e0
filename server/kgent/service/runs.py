"""RunHandle: one AgentRun as every front serves it — its events go, typed and numbered (seq gap-free per run), to
the front's EventSink; its permission prompts go to the front's PermissionPort, and prompts that became moot are
withdrawn (the port's `ask` is cancelled). The fronts adapt both to their wire: JSON-RPC frames (kgent.daemon),
SSE streams and pending approvals (kgent.http), `session/update` and `session/request_permission` (kgent.acp).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from kgent.core.errors import RunStateError
from kgent.core.events import (
    Event,
    MessageDelta,
    PermissionRequest,
    PermissionResolved,
    RunEnd,
    RunResult,
    SubRunEvent,
)
from kgent.core.messages import Usage
from kgent.kernel.cost import usage_to_wire
from kgent.kernel.run import AgentRun
from kgent.service.hostfiles import TextFileHost

log = logging.getLogger("kgent.service")
WIND_DOWN = 10.0  # seconds a run whose events could not be forwarded is given to end once cancelled


@dataclass(frozen=True, slots=True)
class RunRef:
    """Which run an event or a prompt belongs to: a run of a session, or a sub-agent's run under its parent."""

    run_id: str
    session_id: str
    parent_run_id: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """A host's answer to one permission prompt: the option it chose, or `cancel` (the host gave up the whole run,
    as ACP's `cancelled` outcome says)."""

    option_id: str
    cancel: bool = False
    new_text: str | None = None  # approve with changes: the whole file the user wants instead of the proposal


REJECT = Decision("reject_once")


class EventSink(Protocol):
    """Where a front takes a run's events. Called on the event loop, in order; must not block or raise."""

    def send(self, ref: RunRef, seq: int, event: Event) -> None: ...


class PermissionPort(Protocol):
    """How a front asks its host. Cancelled when the prompt became moot (answered by a timeout, run cancelled,
    run ended): the front then withdraws its question. An exception counts as a reject."""

    async def ask(self, ref: RunRef, request: PermissionRequest) -> Decision: ...


@dataclass(slots=True)
class FileScope:
    """Whom a host-file request is for: the session, and the run once it exists (a review has none)."""

    session_id: str
    run_id: str | None = None


class RunPort(EventSink, PermissionPort, Protocol):
    """A front's side of a run: where its events go, whom its prompts ask, and (a host that serves its buffers)
    its text files."""

    def text_files(self, scope: FileScope) -> TextFileHost | None:
        """The host's buffers for requests of `scope`; None if this front has none to offer."""
        ...


def new_text_problem(request: PermissionRequest, option_id: str, new_text: str | None) -> str | None:
    """Why an answer may not carry this `newText` (None: it may) — only an allow option of a request whose toolCall
    has newText (an edit or a write) may. The fronts refuse such an answer (-32602 / 400) and keep the prompt open."""
    if new_text is None:
        return None
    if request.tool_call.preview is None:
        return "newText is only for a request whose toolCall has newText (an edit or a write)"
    chosen = next((o for o in request.options if o.option_id == option_id), None)
    if chosen is None or not chosen.kind.startswith("allow"):
        return "newText comes only with an allow option (the user's version is what they approve)"
    return None


def decide(decision: Decision, request: PermissionRequest) -> Decision:
    """The one policy for an answer (every front): an optionId the prompt did not offer counts as `reject_once` —
    never as an approval, and the prompt is closed (protocol.md § agent/permission). So is an answer with a `newText`
    it may not carry (the fronts refuse those before: this is the backstop)."""
    if decision.cancel or any(o.option_id == decision.option_id for o in request.options):
        if new_text_problem(request, decision.option_id, decision.new_text) is None:
            return decision
        log.info("answer to %s carried a newText it may not: rejected", request.request_id)
        return REJECT
    log.info("answer to %s chose an option it was not offered: rejected", request.request_id)
    return REJECT


def failed_end(run_id: str, session_id: str, message: str) -> RunEnd:
    """The run_end a front gets when forwarding itself failed (a bug): the run counts as failed."""
    return RunEnd(
        result=RunResult(
            run_id=run_id,
            session_id=session_id,
            status="failed",
            stop_reason="error",
            text="",
            error={"code": "internal_error", "message": message},
            usage=usage_to_wire(Usage(), None),
        )
    )


class RunHandle:
    """Forwards one run's events in order and owns its open prompts. `start()` only when the front is ready for
    the first event (the daemon: after the `agent/run` reply has been written)."""

    def __init__(self, run: AgentRun, port: RunPort, on_end: Callable[[RunHandle], None]) -> None:
        self.run = run
        self.run_id = run.run_id
        self.session_id = run.session_id
        self.ref = RunRef(run.run_id, run.session_id)
        self.port = port
        self.on_end = on_end
        # For a run that creates a session: its workspace, and how to create the session if the run ends (say,
        # cancelled) before writing it, so the sessionId the client was given stays usable (protocol.md, agent/cancel).
        self.new_session_in: str | None = None
        self.keep_session: Callable[[], Awaitable[None]] | None = None
        self.seq = 0
        self.status: str | None = None
        self.result: RunResult | None = None
        self.prompts: dict[str, asyncio.Task[None]] = {}
        self.subs: dict[str, _SubRun] = {}  # live sub-agent runs (the `task` tool) of this run, by run id
        self.ended_subs: set[str] = set()  # sub-agent runs of this run that have sent their run_end
        self.task: asyncio.Task[None] | None = None
        # Set once the run has opened its session (run_start: a new session is on disk) or has ended.
        self.opened = asyncio.Event()
        self.ended = asyncio.Event()

    def start(self) -> None:
        if self.task is None:
            log.info("run %s started (session %s)", self.run_id, self.session_id)
            self.task = asyncio.get_running_loop().create_task(
                self._forward(), name=f"kgent-forward-{self.run_id}"
            )

    @property
    def live(self) -> bool:
        return not self.run.done

    def _send(self, event: Event) -> None:
        seq = self.seq
        self.seq += 1
        self.port.send(self.ref, seq, event)

    async def _wind_down(self) -> None:
        """After a failed forward: wait (a while at most) until the cancelled run has ended, so that `ended` means
        its task is over (its tools killed, its session written) and no front is left holding a run it cannot see."""
        try:
            async with asyncio.timeout(WIND_DOWN):
                await self.run.result()
        except TimeoutError:
            log.warning("run %s did not end within %g s of its cancellation", self.run_id, WIND_DOWN)
        except Exception:  # the run's own failure: its result says so
            log.debug("run %s ended with an error", self.run_id, exc_info=True)

    async def _forward(self) -> None:
        send = self.port.send
        ref = self.ref
        try:
            async for event in self.run:
                if type(event) is MessageDelta:  # the hot path: one event per streamed token
                    seq = self.seq
                    self.seq += 1
                    send(ref, seq, event)
                    continue
                if type(event) is SubRunEvent:
                    await self._forward_sub(event)
                    continue
                kind = event.type
                if kind == "run_start":
                    self.opened.set()
                if isinstance(event, RunEnd):
                    end = self.result = event.result
                    self.status = end.status
                    log.info(
                        "run %s ended %s (%s) after %d turn(s), %d file(s) changed",
                        self.run_id,
                        end.status,
                        end.stop_reason,
                        end.turns,
                        len(end.changed_paths),
                    )
                    await self._withdrawn(list(self.prompts))  # before run_end (protocol.md, ordering 4)
                    if not self.opened.is_set() and self.keep_session is not None:
                        await self.keep_session()  # before run_end: the client may resume at once
                    self.opened.set()
                elif (
                    isinstance(event, PermissionResolved)
                    and event.request_id is not None
                    and event.request_id in self.prompts
                ):
                    await self._withdrawn([event.request_id])  # timed out
                self._send(event)
                if isinstance(event, PermissionRequest) and not self.run.cancel_requested:
                    self._ask(ref, event)
        except Exception:  # a bug in a front or here: the client must still see the run end
            log.exception("forwarding the events of %s failed", self.run_id)
            self.run.cancel()
            self.withdraw_all()
            await self._wind_down()
            if self.status is None:
                self.status = "failed"
                end_event = failed_end(self.run_id, self.session_id, "the server failed to forward this run")
                self.result = end_event.result
                try:
                    self._send(end_event)
                except Exception:
                    log.exception("sending the run_end of %s failed", self.run_id)
        finally:
            self.opened.set()
            self.withdraw_all()
            self.ended.set()
            self.on_end(self)

    async def _forward_sub(self, wrapped: SubRunEvent) -> None:
        """A sub-agent's event: an event of its own run (own seq, its parent named), its prompts asked as its."""
        sub = self.subs.get(wrapped.run_id)
        if sub is None:
            sub = self.subs[wrapped.run_id] = _SubRun(
                RunRef(wrapped.run_id, self.session_id, wrapped.parent_run_id)
            )
        event = wrapped.event
        if isinstance(event, RunEnd):
            await self._withdrawn(sub.prompts)  # before its run_end, as for any run
            del self.subs[wrapped.run_id]
            self.ended_subs.add(wrapped.run_id)
        elif isinstance(event, PermissionResolved) and event.request_id in self.prompts:
            await self._withdrawn([event.request_id])  # timed out
        seq = sub.seq
        sub.seq += 1
        self.port.send(sub.ref, seq, event)
        if isinstance(event, PermissionRequest) and not self.run.cancel_requested:
            sub.prompts.append(event.request_id)
            self._ask(sub.ref, event)

    def cancel_sub(self, run_id: str) -> bool | None:
        """Cancel one live sub-agent run of this run (its parent goes on: the `task` call fails); False if it has
        ended, None if there is no such sub-run here."""
        if run_id in self.ended_subs:
            return False
        if run_id not in self.subs:
            return None
        child = self.run.sub_run(run_id)
        if child is None or child.done:
            return False
        for rid in self.subs[run_id].prompts:
            self.withdraw(rid)
        child.cancel()
        return True

    def sub_run_queue(self, run_id: str, text: str, *, steer: bool) -> bool:
        """`agent/steer` / `agent/followUp` with the runId of a sub-agent's run of this run: queue `text` for that
        sub-agent only (steer: its model sees it after its current tool batch; follow-up: when it would otherwise
        settle, and it goes on). False if there is no such sub-run here; RunStateError `run_not_live` if it has
        ended."""
        child = self._sub_run(run_id)
        if child is None:
            return False
        if steer:
            child.steer(text)
        else:
            child.follow_up(text)
        return True

    def sub_run_clear_queue(self, run_id: str) -> bool:
        """`agent/clearQueue` with the runId of a sub-agent's run of this run; False if there is no such sub-run
        here; RunStateError `run_not_live` if it has ended."""
        child = self._sub_run(run_id)
        if child is None:
            return False
        child.clear_queue()
        return True

    def _sub_run(self, run_id: str) -> AgentRun | None:
        """The live sub-agent run `run_id` of this run (at any depth) the host has seen start; None if it is none of
        this run's; RunStateError `run_not_live` if it has ended."""
        if run_id not in self.subs and run_id not in self.ended_subs:
            return None
        child = self.run.sub_run(run_id) if run_id in self.subs else None
        if child is None or child.done:
            raise RunStateError(
                f"sub-agent run {run_id} has ended; steer or follow up its parent instead",
                code="run_not_live",
            )
        return child

    # -- permissions --------------------------------------------------------------------------------------------
    def _ask(self, ref: RunRef, request: PermissionRequest) -> None:
        self.prompts[request.request_id] = asyncio.get_running_loop().create_task(
            self._await_answer(ref, request)
        )

    async def _await_answer(self, ref: RunRef, request: PermissionRequest) -> None:
        rid = request.request_id
        try:
            decision = decide(await self.port.ask(ref, request), request)
        except asyncio.CancelledError:
            raise
        except Exception:  # an error reply (or a broken one) is a reject
            log.debug("the answer to %s failed", rid, exc_info=True)
            decision = REJECT
        self.prompts.pop(rid, None)
        if decision.cancel:  # the host gave up the run (ACP: the client is cancelling the turn)
            self.cancel()
        elif not self.run.resolve_permission(rid, decision.option_id, decision.new_text):
            log.debug("answer to %s came after it was closed", rid)

    def withdraw(self, rid: str) -> asyncio.Task[None] | None:
        """Cancel the prompt's `ask`: the front withdraws its question as that task ends (soon, not now)."""
        task = self.prompts.pop(rid, None)
        if task is not None:
            task.cancel()
        return task

    async def _withdrawn(self, rids: list[str]) -> None:
        """Withdraw these prompts and wait until the front has (so the withdrawal precedes the next event)."""
        tasks = [t for t in map(self.withdraw, rids) if t is not None]
        if tasks:
            await asyncio.wait(tasks)

    def withdraw_all(self) -> None:
        for rid in list(self.prompts):
            self.withdraw(rid)

    # -- control ------------------------------------------------------------------------------------------------
    def cancel(self, *, stop_background: bool = False) -> bool:
        """Cancel the run; its open prompts are withdrawn now. False if it had already ended. The session's
        background commands go on unless `stop_background`."""
        if self.run.done:
            return False
        self.withdraw_all()
        self.run.cancel(stop_background=stop_background)
        return True


class _SubRun:
    """One sub-agent run as the front sees it: its ref (with the parent), its seq, its open prompts."""

    __slots__ = ("prompts", "ref", "seq")

    def __init__(self, ref: RunRef) -> None:
        self.ref = ref
        self.seq = 0
        self.prompts: list[str] = []
