"""A compaction as a run of its own (`/compact [focus]`): `run_start`, `compaction` started and completed (or
failed), one `message_delta` saying what it did, `run_end` — the session's checkpoint written as `agent/compact`
writes it (kgent.context.compaction), with no model turn of the agent. `AgentKernel.compact_run` starts it."""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass
from typing import Any

from kgent.context.compaction import compact_session
from kgent.core.errors import KgentError
from kgent.core.events import CompactionEvent, MessageDelta, RunResult, RunStart
from kgent.core.messages import Usage
from kgent.kernel.cost import usage_to_wire
from kgent.kernel.run import AgentRun
from kgent.providers.base import Provider
from kgent.session.store import SessionStore

log = logging.getLogger("kgent.kernel")

NOTHING = "Nothing to compact yet."


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSpec:
    """What one compaction run does: which session, in whose words (`prompt`, what was typed), with which model."""

    session_id: str
    workspace: str
    mode: str
    prompt: str
    focus: str
    provider: Provider
    store: SessionStore
    config: Any  # the kernel's KernelConfig: the model's context settings


async def compaction(spec: CompactionSpec, run: AgentRun) -> RunResult:
    """The run's body: its events and its result (settled, or failed / cancelled with the compaction's error)."""
    # No usage of the agent's: the summary's model call is the compaction's, as with agent/compact.
    end = functools.partial(
        RunResult, run_id=run.run_id, session_id=spec.session_id, usage=usage_to_wire(Usage(), None)
    )
    provider = spec.provider
    run.emit(
        RunStart(
            run_id=run.run_id,
            session_id=spec.session_id,
            workspace=spec.workspace,
            mode=spec.mode,
            provider=provider.name,
            model=provider.model,
            prompt=spec.prompt,
        )
    )
    run.emit(CompactionEvent(status="started", trigger="manual"))
    try:
        done = await compact_session(
            spec.store, provider, spec.session_id, config=spec.config, focus=spec.focus or None
        )
    except asyncio.CancelledError:
        run.emit(CompactionEvent(status="failed", trigger="manual", error="cancelled"))
        return end(status="cancelled", stop_reason="cancelled", text="")
    except Exception as exc:  # a provider or store failure: the run fails with it
        if isinstance(exc, KgentError):
            error = {"code": exc.code, "message": exc.message}
        else:  # a bug: said as the loop says one
            log.exception("the compaction of %s failed", spec.session_id)
            error = {"code": "kernel_error", "message": f"{type(exc).__name__}: {exc}"}
        run.emit(CompactionEvent(status="failed", trigger="manual", error=error["message"]))
        return end(status="failed", stop_reason="error", text="", error=error)
    if done is None:  # completed, with no checkpoint (protocol.md: entryId only when known)
        run.emit(CompactionEvent(status="completed", trigger="manual"))
        run.emit(MessageDelta(kind="text", delta=NOTHING))
        return end(status="settled", stop_reason="end", text=NOTHING)
    run.emit(
        CompactionEvent(
            status="completed",
            trigger="manual",
            entry_id=done.entry.id,
            tokens_before=done.tokens_before,
            tokens_after=done.tokens_after,
        )
    )
    text = f"Compacted the context: about {done.tokens_before} tokens before, {done.tokens_after} after."
    run.emit(MessageDelta(kind="text", delta=text))  # what every front shows of it
    return end(status="settled", stop_reason="end", text=text)
