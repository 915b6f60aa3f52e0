"""Compaction: replace the old part of the active branch by a checkpoint summary, automatically (the kernel's
`Compactor` hook) or on demand (`compact_session`).

A checkpoint is one `compaction` entry appended at the leaf; the history it covers stays in the file. Nothing is
persisted unless the summary came back valid.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from kgent.context.cut import CompactionPlan, plan_compaction
from kgent.context.projection import latest_checkpoint, project
from kgent.context.summarizing import SummarizingProvider
from kgent.context.summary import SUMMARY_SYSTEM_PROMPT, serialize, summary_prompt, validate_summary
from kgent.context.tokens import (
    RunningEstimate,
    context_window,
    estimate_context,
    estimate_overhead,
    estimate_text,
)
from kgent.core.errors import KgentError
from kgent.core.events import CompactionEvent
from kgent.core.messages import AssistantMessage, Message, SummaryMessage, UserMessage
from kgent.providers.base import Provider, ProviderRequest, StreamDone
from kgent.session.entries import SessionEntry, new_entry

if TYPE_CHECKING:
    from kgent.kernel.loop import Loop
    from kgent.kernel.run import AgentRun
    from kgent.session.store import SessionStore

DEFAULT_RESERVE_TOKENS = 16_384
DEFAULT_KEEP_RECENT_TOKENS = 20_000
MAX_SUMMARY_TOKENS = 8_192

Trigger = Literal["automatic", "manual", "overflow"]


class CompactionError(KgentError):
    """The summary could not be made (provider error, tool call, missing sections); nothing was persisted."""

    code = "compaction_failed"


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSettings:
    """When to compact and how much to keep. The reserve is capped at half the window, and the kept tail at half
    of what remains, so small windows (tests, demos) still work."""

    context_window: int
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS

    @property
    def threshold(self) -> int:
        """Compact when the estimated context exceeds this many tokens."""
        return self.context_window - min(self.reserve_tokens, self.context_window // 2)

    @property
    def keep_tokens(self) -> int:
        return max(1, min(self.keep_recent_tokens, self.threshold // 2))

    @property
    def summary_max_tokens(self) -> int:
        """The answer budget of a summary request."""
        return max(256, min(MAX_SUMMARY_TOKENS, int(0.8 * min(self.reserve_tokens, self.context_window // 2))))

    @property
    def summary_prompt_tokens(self) -> int:
        """The most conversation one summary request carries; a longer span is summarized in parts."""
        return max(1024, (self.context_window - self.summary_max_tokens) * 3 // 4)

    @classmethod
    def resolve(cls, config: Any, provider: str, model: str) -> CompactionSettings:
        """Settings for a model, first found wins per value: KernelConfig's `model_context` entry for the model
        (exact name, else the longest matching prefix), then its `context_window` / `reserve_tokens` /
        `keep_recent_tokens`, then the window from kgent.context.tokens.MODEL_WINDOWS and the defaults."""
        table = getattr(config, "model_context", None) or {}
        names = [m for m in table if model == m or model.startswith(m)]
        per_model = table[max(names, key=len)] if names else {}

        def pick(key: str, default: int) -> int:
            return int(per_model.get(key) or getattr(config, key, None) or default)

        return cls(
            context_window=pick("context_window", context_window(provider, model)),
            reserve_tokens=pick("reserve_tokens", DEFAULT_RESERVE_TOKENS),
            keep_recent_tokens=pick("keep_recent_tokens", DEFAULT_KEEP_RECENT_TOKENS),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionResult:
    entry: SessionEntry  # the persisted checkpoint
    tokens_before: int
    tokens_after: int
    messages: list[Message]  # the projection of the branch that now ends in the checkpoint


async def summarize(
    provider: Provider,
    plan: CompactionPlan,
    *,
    max_tokens: int,
    max_prompt_tokens: int | None = None,
    focus: str | None = None,
) -> str:
    """Ask `provider` (tool-less requests) for the checkpoint summary of `plan`; CompactionError on any failure.

    The previous checkpoint's summary is updated with the newly covered messages. A span too long for one request
    (over `max_prompt_tokens`) is fed in consecutive parts, each updating the summary of the parts before it.
    """
    summary = plan.previous.data.get("summary") if plan.previous is not None else None
    for part in split_span(plan.covered_messages, max_prompt_tokens):
        prompt = summary_prompt(
            part, previous=summary, read_files=plan.read_files, modified_files=plan.modified_files, focus=focus
        )
        summary = await _ask(provider, prompt, max_tokens)
    if summary is None:
        raise CompactionError("nothing to summarize")
    return summary


def split_span(messages: Sequence[Message], max_tokens: int | None) -> list[Sequence[Message]]:
    """Consecutive parts of `messages` whose serialized form stays under `max_tokens` (a longer single message
    gets a part of its own)."""
    if max_tokens is None:
        return [messages] if messages else []
    parts: list[Sequence[Message]] = []
    start, size = 0, 0
    for i, m in enumerate(messages):
        tokens = estimate_text(serialize([m])) + 1
        if i > start and size + tokens > max_tokens:
            parts.append(messages[start:i])
            start, size = i, 0
        size += tokens
    if start < len(messages):
        parts.append(messages[start:])
    return parts


async def _ask(provider: Provider, prompt: str, max_tokens: int) -> str:
    if getattr(provider, "model_free_summaries", False) and not isinstance(provider, SummarizingProvider):
        provider = SummarizingProvider(provider)
    request = ProviderRequest(
        system_prompt=SUMMARY_SYSTEM_PROMPT,
        messages=(UserMessage(text=prompt),),
        tools=(),
        model=provider.model,
        max_tokens=max_tokens,
    )
    message: AssistantMessage | None = None
    async for event in provider.stream(request):
        if isinstance(event, StreamDone):
            message = event.message
    if message is None:
        raise CompactionError("the summary request ended without a message")
    if message.stop_reason in ("error", "aborted"):
        raise CompactionError(f"the summary request failed: {message.error or message.stop_reason}")
    if message.tool_calls:
        raise CompactionError("the summary request was answered with a tool call")
    try:
        return validate_summary(message.text)
    except ValueError as exc:
        raise CompactionError(str(exc)) from None


def trusted_from(branch: Sequence[SessionEntry], messages: Sequence[Message]) -> int:
    """Index in `project(branch)` from which reported usage is trustworthy: the messages after the latest checkpoint
    (those before it were measured on the uncompacted context)."""
    c = latest_checkpoint(branch)
    if c is None:
        return 0
    after = sum(1 for e in branch[c + 1 :] if e.type == "message")
    return max(0, len(messages) - after)


def checkpoint_data(
    plan: CompactionPlan,
    summary: str,
    branch: Sequence[SessionEntry],
    *,
    tokens_before: int,
    trigger: Trigger,
    overhead: int = 0,
) -> dict[str, Any]:
    """The data of the `compaction` entry that ends `branch` with `plan` carried out."""
    data: dict[str, Any] = {
        "summary": summary,
        "coveredEntryIds": [e.id for e in plan.covered],
        "firstKeptEntryId": plan.first_kept_id,
        "previousCheckpointId": plan.previous.id if plan.previous is not None else None,
        "readFiles": list(plan.read_files),
        "modifiedFiles": list(plan.modified_files),
        "tokensBefore": tokens_before,
        "tokensAfter": 0,
        "trigger": trigger,
    }
    probe = SessionEntry(id="", parent_id=None, type="compaction", timestamp="", data=data)
    data["tokensAfter"] = estimate_context(project([*branch, probe]), trusted_from=1 << 30, overhead=overhead).tokens
    return data


async def compact_session(
    store: SessionStore,
    provider: Provider,
    session_id: str,
    *,
    leaf_id: str | None = None,
    config: Any = None,
    keep_recent_tokens: int | None = None,
    focus: str | None = None,
) -> CompactionResult | None:
    """Compact a stored session now (`kgent sessions compact`, the daemon's `agent/compact`).

    Appends one checkpoint at `leaf_id` (default: the active leaf) and returns it, or returns None when there is
    nothing to compact. Raises CompactionError (nothing persisted) when the summary fails. Do not call it while
    a run is live on the session: the run would not see the checkpoint until it resumes.
    """
    tree = await store.load(session_id)
    leaf = leaf_id if leaf_id is not None else tree.leaf_id
    if leaf is not None and leaf not in tree.entries:
        raise KgentError(f"no entry {leaf!r} in session {session_id}", code="entry_not_found")
    branch = tree.branch(leaf)
    settings = CompactionSettings.resolve(config, provider.name, provider.model)
    messages = project(branch)
    before = estimate_context(messages, trusted_from=trusted_from(branch, messages)).tokens
    plan = plan_compaction(branch, keep_recent_tokens if keep_recent_tokens is not None else settings.keep_tokens)
    if plan is None:
        return None
    summary = await summarize(
        provider,
        plan,
        max_tokens=settings.summary_max_tokens,
        max_prompt_tokens=settings.summary_prompt_tokens,
        focus=focus,
    )
    data = checkpoint_data(plan, summary, branch, tokens_before=before, trigger="manual")
    entry = new_entry("compaction", leaf, **data)
    await store.append(session_id, [entry])
    return CompactionResult(
        entry=entry, tokens_before=before, tokens_after=data["tokensAfter"], messages=project([*branch, entry])
    )


@dataclass(slots=True)
class _RunState:
    estimate: RunningEstimate
    disabled: bool = False  # an automatic compaction failed in this run: do not retry it every turn
    retry_above: int = 0  # nothing was compactable at this estimate: wait for the context to grow


class Compactor:
    """The kernel's compaction hook (`AgentKernel.compactor`).

    `before_request` compacts when the estimated context exceeds the window minus the reserve (unless
    KernelConfig.auto_compact is False); `on_overflow` compacts after a provider `context_overflow` error (always)
    and says whether the turn is worth retrying. A failed compaction persists nothing, emits
    CompactionEvent(status="failed"), and the run continues uncompacted; automatic compaction then stays off for
    the rest of that run.
    """

    def __init__(self) -> None:
        self._runs: weakref.WeakKeyDictionary[Loop, _RunState] = weakref.WeakKeyDictionary()

    def _state(self, loop: Loop) -> _RunState:
        state = self._runs.get(loop)
        if state is None:
            history = loop.state.history
            # A resumed, compacted branch carries kept messages whose usage predates the checkpoint.
            compacted = bool(history) and isinstance(history[0], SummaryMessage)
            state = self._runs[loop] = _RunState(
                estimate=RunningEstimate(
                    trusted_from=len(history) if compacted else 0,
                    overhead=estimate_overhead(loop.system_prompt, loop.schemas),
                )
            )
        return state

    def estimate(self, loop: Loop) -> int:
        """Estimated tokens of the loop's next request (see kgent.context.tokens.estimate_context)."""
        return self._state(loop).estimate.update(loop.state.history).tokens

    def settings(self, loop: Loop) -> CompactionSettings:
        provider = loop.spec.provider
        return CompactionSettings.resolve(loop.kernel.config, provider.name, provider.model)

    async def before_request(self, loop: Loop, run: AgentRun) -> None:
        if not getattr(loop.kernel.config, "auto_compact", True):
            return
        state = self._state(loop)
        settings = self.settings(loop)
        tokens = self.estimate(loop)
        if state.disabled or tokens <= settings.threshold or tokens <= state.retry_above:
            return
        await self._compact(loop, run, "automatic", settings.keep_tokens, settings, tokens)

    async def on_overflow(self, loop: Loop, run: AgentRun) -> bool:
        settings = self.settings(loop)
        tokens = self.estimate(loop)
        # The provider disagrees with the estimate: keep less than usual.
        keep = min(settings.keep_tokens, max(1, tokens // 4))
        return await self._compact(loop, run, "overflow", keep, settings, tokens)

    async def _compact(
        self, loop: Loop, run: AgentRun, trigger: Trigger, keep: int, settings: CompactionSettings, tokens: int
    ) -> bool:
        state = self._state(loop)
        plan: CompactionPlan | None = None
        previous_leaf = loop.state.leaf_id
        try:
            tree = await loop.kernel.store.load(loop.spec.session_id)
            branch = tree.branch(previous_leaf)
            plan = plan_compaction(branch, keep)
            if plan is None:  # nothing to cut yet: not worth an event, nor a try every turn
                state.retry_above = tokens + keep // 2
                return False
            run.emit(CompactionEvent(status="started", trigger=trigger, tokens_before=tokens))
            summary = await summarize(
                loop.spec.provider,
                plan,
                max_tokens=settings.summary_max_tokens,
                max_prompt_tokens=settings.summary_prompt_tokens,
            )
            data = checkpoint_data(
                plan, summary, branch, tokens_before=tokens, trigger=trigger, overhead=state.estimate.overhead
            )
            entry = loop.entry("compaction", **data)
            await loop.persist([entry])
        except KgentError as exc:
            loop.state.leaf_id = previous_leaf
            state.disabled = state.disabled or trigger == "automatic"
            if plan is None:
                run.emit(CompactionEvent(status="started", trigger=trigger, tokens_before=tokens))
            run.emit(CompactionEvent(status="failed", trigger=trigger, tokens_before=tokens, error=exc.message))
            return False
        loop.state.history = loop.kernel.project([*branch, entry])
        state.estimate.restart(trusted_from=len(loop.state.history))
        state.retry_above = 0
        run.emit(
            CompactionEvent(
                status="completed",
                trigger=trigger,
                entry_id=entry.id,
                tokens_before=tokens,
                tokens_after=data["tokensAfter"],
            )
        )
        return True
