"""Compaction: replace the old part of the active branch by a checkpoint summary, automatically (the kernel's
`Compactor` hook) or on demand (`compact_session`).

A checkpoint is one `compaction` entry appended at the leaf; the history it covers stays in the file. Nothing is
persisted unless the summary came back valid.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from kgent.context.cut import CompactionPlan, plan_compaction
from kgent.context.instructions import ENTRY_TYPE as INSTRUCTIONS
from kgent.context.projection import latest_checkpoint, own_context, project
from kgent.context.skills import ENTRY_TYPE as SKILLS
from kgent.context.summarizing import SummarizingProvider
from kgent.context.summary import SUMMARY_SYSTEM_PROMPT, serialize, summary_prompt, validate_summary
from kgent.context.tokens import (
    RunningEstimate,
    context_window,
    estimate_context,
    estimate_text,
)
from kgent.core.errors import KgentError
from kgent.core.events import CompactionEvent
from kgent.core.messages import AssistantMessage, Message, SummaryMessage, UserMessage
from kgent.providers.base import Provider, ProviderRequest, StreamDone
from kgent.session.entries import SessionEntry, new_entry
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
        return max(
            256, min(MAX_SUMMARY_TOKENS, int(0.8 * min(self.reserve_tokens, self.context_window // 2)))
        )

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
    summary: str | None = plan.previous.data.get("summary") if plan.previous is not None else None
    for part in split_span(plan.covered_messages, max_prompt_tokens):
        prompt = summary_prompt(
            part,
            previous=summary,
            read_files=plan.read_files,
            modified_files=plan.modified_files,
            focus=focus,
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
    after = sum(1 for e in branch[c + 1 :] if e.type in ("message", INSTRUCTIONS, SKILLS))
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
    data["tokensAfter"] = estimate_context(
        project([*branch, probe]), trusted_from=1 << 30, overhead=overhead
    ).tokens
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
    plan = plan_compaction(
        branch, keep_recent_tokens if keep_recent_tokens is not None else settings.keep_tokens
    )
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
        entry=entry,
        tokens_before=before,
        tokens_after=data["tokensAfter"],
        messages=project([*branch, entry]),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RunContext:
    """What a run's compaction needs to know about the run (given once, when the run starts)."""

    store: SessionStore
    session_id: str
    provider: Provider
    settings: CompactionSettings
    auto: bool  # compact before a request that would overflow (KernelConfig.auto_compact)
    overhead: int  # estimated tokens of the system prompt and tool schemas
    project: Callable[[Sequence[SessionEntry]], list[Message]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """What a compaction asks the loop to do: persist `entry` (chained after the run's leaf), then continue from
    `history`. `settle` turns the outcome into the event the loop emits."""

    trigger: Trigger
    entry: SessionEntry
    history: list[Message]
    tokens_before: int
    tokens_after: int


Emit = Callable[[CompactionEvent], None]


class RunCompaction(Protocol):
    """One run's compaction: the loop calls these and applies what they return; they never touch the loop."""

    async def before_request(
        self, history: Sequence[Message], leaf_id: str | None, emit: Emit
    ) -> Compaction | None:
        """Before each model request: a checkpoint when the context outgrew the window, else None."""
        ...

    async def on_overflow(
        self, history: Sequence[Message], leaf_id: str | None, emit: Emit
    ) -> Compaction | None:
        """After a provider `context_overflow`: a checkpoint (the turn is then retried once), else None."""
        ...

    def settle(self, compaction: Compaction, error: str | None) -> CompactionEvent:
        """The loop persisted `compaction` (error None) or failed to (error says why): the event to emit."""
        ...


class CompactionPolicy(Protocol):
    """The kernel's compaction seam (`AgentKernel.compactor`): one RunCompaction per run."""

    def for_run(self, run: RunContext) -> RunCompaction: ...


class Compactor:
    """The default CompactionPolicy.

    Before a request it compacts when the estimated context exceeds the window minus the reserve (unless
    `RunContext.auto` is False); after a provider `context_overflow` error it compacts always, keeping less. A
    failed compaction persists nothing, emits CompactionEvent(status="failed"), and the run continues uncompacted;
    automatic compaction then stays off for the rest of that run.
    """

    def for_run(self, run: RunContext) -> RunCompactor:
        return RunCompactor(run)


class RunCompactor:
    """Compactor's per-run state: a running token estimate and whether automatic compaction is still on."""

    def __init__(self, run: RunContext) -> None:
        self.run = run
        self.disabled = False  # an automatic compaction failed in this run: do not retry it every turn
        self.retry_above = 0  # nothing was compactable at this estimate: wait for the context to grow
        self._estimate: RunningEstimate | None = None

    def estimate(self, history: Sequence[Message]) -> int:
        """Estimated tokens of the next request (see kgent.context.tokens.estimate_context)."""
        if self._estimate is None:
            # A resumed, compacted branch carries kept messages whose usage predates the checkpoint.
            compacted = bool(history) and isinstance(history[0], SummaryMessage)
            self._estimate = RunningEstimate(
                trusted_from=len(history) if compacted else 0, overhead=self.run.overhead
            )
        return self._estimate.update(history).tokens

    async def before_request(
        self, history: Sequence[Message], leaf_id: str | None, emit: Emit
    ) -> Compaction | None:
        if not self.run.auto:
            return None
        settings = self.run.settings
        tokens = self.estimate(history)
        if self.disabled or tokens <= settings.threshold or tokens <= self.retry_above:
            return None
        return await self._compact(leaf_id, "automatic", settings.keep_tokens, tokens, emit)

    async def on_overflow(
        self, history: Sequence[Message], leaf_id: str | None, emit: Emit
    ) -> Compaction | None:
        tokens = self.estimate(history)
        # The provider disagrees with the estimate: keep less than usual.
        keep = min(self.run.settings.keep_tokens, max(1, tokens // 4))
        return await self._compact(leaf_id, "overflow", keep, tokens, emit)

    def settle(self, compaction: Compaction, error: str | None) -> CompactionEvent:
        if error is not None:
            return self._failed(compaction.trigger, compaction.tokens_before, error)
        if self._estimate is not None:
            self._estimate.restart(trusted_from=len(compaction.history))
        self.retry_above = 0
        return CompactionEvent(
            status="completed",
            trigger=compaction.trigger,
            entry_id=compaction.entry.id,
            tokens_before=compaction.tokens_before,
            tokens_after=compaction.tokens_after,
        )

    def _failed(self, trigger: Trigger, tokens: int, error: str) -> CompactionEvent:
        self.disabled = self.disabled or trigger == "automatic"
        return CompactionEvent(status="failed", trigger=trigger, tokens_before=tokens, error=error)

    async def _compact(
        self, leaf_id: str | None, trigger: Trigger, keep: int, tokens: int, emit: Emit
    ) -> Compaction | None:
        run, settings = self.run, self.run.settings
        started = False
        try:
            tree = await run.store.load(run.session_id)
            branch = own_context(tree.branch(leaf_id))  # a sub-agent's run: only its own part of the branch
            plan = plan_compaction(branch, keep)
            if plan is None:  # nothing to cut yet: not worth an event, nor a try every turn
                self.retry_above = tokens + keep // 2
                return None
            emit(CompactionEvent(status="started", trigger=trigger, tokens_before=tokens))
            started = True
            summary = await summarize(
                run.provider,
                plan,
                max_tokens=settings.summary_max_tokens,
                max_prompt_tokens=settings.summary_prompt_tokens,
            )
            overhead = self._estimate.overhead if self._estimate is not None else run.overhead
            data = checkpoint_data(
                plan, summary, branch, tokens_before=tokens, trigger=trigger, overhead=overhead
            )
        except KgentError as exc:
            if not started:
                emit(CompactionEvent(status="started", trigger=trigger, tokens_before=tokens))
            emit(self._failed(trigger, tokens, exc.message))
            return None
        entry = new_entry("compaction", leaf_id, **data)
        return Compaction(
            trigger=trigger,
            entry=entry,
            history=run.project([*branch, entry]),
            tokens_before=tokens,
            tokens_after=data["tokensAfter"],
        )
