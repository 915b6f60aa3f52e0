"""AcpPort: the shared service's run port (kgent.service.runs) over ACP — a run's events go, in order, to the turn
that prompted it (which sends them as `session/update`s), its permission prompts become
`session/request_permission`, and the tools' text files go through the client's `fs/*` when it offers them.

A sub-agent's events are relabelled as the turn's own here, when they arrive, so a prompt that follows one at once
already carries the sub-agent's name."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from acp import Client
from acp import schema as S

from kgent.core.events import (
    Event,
    MessageDelta,
    MessageEnd,
    PermissionRequest,
    RunEnd,
    RunStart,
    SubRunEvent,
    ToolUpdate,
)
from kgent.service.runs import REJECT, Decision, FileScope, RunRef

from . import updates as U
from .files import ClientTextFiles
from .options import ClientKind, offer
from .setup import Lasting

log = logging.getLogger("kgent.acp")


SUB_TEXT = 4000  # characters of a sub-agent's latest text shown in its `task` call while it works


class Turn:
    """One prompt's events, queued for the coroutine answering `session/prompt`. A future in the queue is a
    barrier: it is resolved once every event before it has been sent."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Event | asyncio.Future[None]] = asyncio.Queue()
        self.agents: dict[str, str] = {}  # live sub-agent run id → its name
        self.task_calls: dict[
            str, str
        ] = {}  # live sub-agent run id → the parent's `task` call that started it
        self.sub_text: dict[str, str] = {}  # live sub-agent run id → the tail of what it has written

    def sub_stream(self, run_id: str, event: Event) -> ToolUpdate | None:
        """A sub-agent's streamed text as live output of its `task` call (ACP nests nothing else under a call):
        its latest SUB_TEXT characters, growing as it writes (each update replaces the last)."""
        if isinstance(event, RunStart) and event.parent_tool_call_id:
            self.task_calls[run_id] = event.parent_tool_call_id
        elif isinstance(event, RunEnd):
            self.task_calls.pop(run_id, None)
            self.sub_text.pop(run_id, None)
        elif isinstance(event, MessageEnd) and self.sub_text.get(run_id):
            self.sub_text[run_id] = self.sub_text[run_id].rstrip("\n") + "\n\n"  # its next turn's text apart
        elif type(event) is MessageDelta and event.kind == "text" and run_id in self.task_calls:
            text = (self.sub_text.get(run_id, "") + event.delta)[-SUB_TEXT:]
            self.sub_text[run_id] = text
            return ToolUpdate(tool_call_id=self.task_calls[run_id], status="in_progress", output=text)
        return None


class AcpPort:
    """Implements RunPort for one ACP connection."""

    def __init__(
        self,
        client: Callable[[], Client | None],
        workspace: Callable[[str], str],
        lasting: Callable[[str], Lasting] = lambda _sid: "session",
        client_kind: Callable[[], ClientKind] = lambda: "other",
    ) -> None:
        self._client = client
        self._workspace = workspace  # session id → its workspace
        self._lasting = (
            lasting  # session id → how long its 'always' answers last (its `lasting` config option)
        )
        self._client_kind = (
            client_kind  # the client whose choices the options are named for (kgent.acp.options)
        )
        self.turns: dict[str, Turn] = {}  # session id → the turn now streaming

    def send(self, ref: RunRef, seq: int, event: Event) -> None:
        turn = self.turns.get(ref.session_id)
        if turn is None:
            log.debug("dropped a %s of %s: no turn takes it", event.type, ref.run_id)
            return
        if ref.parent_run_id is not None:  # a sub-agent's: its calls and prompts show as this turn's
            if isinstance(event, RunStart):
                turn.agents[ref.run_id] = event.agent or "sub-agent"
            live = turn.sub_stream(ref.run_id, event)
            if live is not None:
                turn.queue.put_nowait(live)
                return
            shown = U.sub_agent_event(
                SubRunEvent(run_id=ref.run_id, parent_run_id=ref.parent_run_id, event=event), turn.agents
            )
            if shown is None or isinstance(shown, PermissionRequest):
                return  # a prompt is asked (and shown) by `ask`
            event = shown
        turn.queue.put_nowait(event)

    async def ask(self, ref: RunRef, request: PermissionRequest) -> Decision:
        client = self._client()
        if client is None:
            return REJECT
        turn = self.turns.get(ref.session_id)
        if turn is not None:  # the call it is about has been shown first
            shown: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            turn.queue.put_nowait(shown)
            await shown
            if ref.parent_run_id is not None:
                relabelled = U.sub_agent_event(
                    SubRunEvent(run_id=ref.run_id, parent_run_id=ref.parent_run_id, event=request),
                    turn.agents,
                )
                assert isinstance(relabelled, PermissionRequest)
                request = relabelled
        offered = offer(request.options, self._lasting(ref.session_id), self._client_kind())
        response = await client.request_permission(
            session_id=ref.session_id,
            tool_call=U.permission_tool_call(request, self._workspace(ref.session_id)),
            options=offered.options,
        )
        outcome: Any = response.outcome
        if isinstance(outcome, S.AllowedOutcome):
            return Decision(offered.decision(outcome.option_id))
        return Decision("reject_once", cancel=True)  # `cancelled`: the client is cancelling the turn

    def text_files(self, scope: FileScope) -> ClientTextFiles | None:
        client = self._client()
        return ClientTextFiles(client, scope.session_id) if client is not None else None
