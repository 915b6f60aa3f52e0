"""KernelConfig: the knobs of the loop that are not the provider's, the tools' or the store's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kgent.core.errors import ConfigError
from kgent.providers.pricing import PriceTable

DEFAULT_PARALLEL_SUBAGENTS = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelConfig:
    mode: str = "ask"
    max_turns: int = 200  # model turns a run may take (a run's own limit, create_run(max_turns=), wins)
    # Sub-agents (the `task` tool): how deep they may nest (1: a sub-agent cannot start another), how many one run
    # may start, and how many of one model turn's `task` calls run at once (the others wait for a free slot;
    # KGENT_MAX_SUBAGENTS, read by `parallel_subagents`).
    max_subagent_depth: int = 1
    max_subagents: int = 8
    max_parallel_subagents: int = DEFAULT_PARALLEL_SUBAGENTS
    system_prompt: str | None = None  # None: the built-in coding prompt (kernel/prompt.py)
    bash_timeout: float = 120.0
    max_background: int = 8  # background commands (bash's `background: true`) one session may run at once
    approval_timeout: float | None = None  # seconds a permission prompt may stay open; None = no limit
    max_tokens: int | None = None
    # Context compaction (kgent.context.compaction): the window comes from a per-model table unless set here.
    context_window: int | None = None
    reserve_tokens: int = 16_384  # compact when the context exceeds context_window - reserve_tokens
    keep_recent_tokens: int = 20_000  # about this many of the newest tokens stay verbatim
    auto_compact: bool = True  # False: compact only on demand or after a provider context_overflow error
    # Per model (exact name or prefix, e.g. "deepseek"): any of context_window / reserve_tokens / keep_recent_tokens.
    model_context: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    prices: PriceTable | None = None  # None: the built-in table (kgent/providers/prices.json)
    cost_limit: float | None = (
        None  # US dollars a run may spend (estimated; needs the model's price); None: no limit
    )
    # Context resources (kgent.context.instructions, .skills): AGENTS.md / CLAUDE.md files and skills. False: none.
    resources: bool = True
    skill_dirs: tuple[Path, ...] = ()
    # Diagnostics after edits from the language servers of `[language_servers.*]` (kgent.lsp), for hosts that have
    # none of their own. False: never start one.
    language_servers: bool = True  # more folders of skills (extensions register them: kgent.ext)

    def __post_init__(self) -> None:
        bound = self.max_parallel_subagents
        if isinstance(bound, bool) or not isinstance(bound, int) or bound < 1:
            raise ConfigError(f"max_parallel_subagents must be a positive integer, got {bound!r}")


def parallel_subagents(env: Mapping[str, str]) -> int:
    """`KernelConfig.max_parallel_subagents` from KGENT_MAX_SUBAGENTS (how many sub-agents of one model turn run at
    once; default 3); ConfigError naming the variable unless it is a positive integer."""
    raw = env.get("KGENT_MAX_SUBAGENTS", "").strip()
    if not raw:
        return DEFAULT_PARALLEL_SUBAGENTS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(f"KGENT_MAX_SUBAGENTS must be a positive integer (sub-agents at once), got {raw!r}")
    return value
