"""Context: what each provider request carries (the active branch, projected) and compaction when it grows."""

from kgent.context.compaction import (
    CompactionError,
    CompactionResult,
    CompactionSettings,
    Compactor,
    compact_session,
)
from kgent.context.projection import project
from kgent.context.summarizing import SummarizingProvider
from kgent.context.tokens import context_window, estimate_context

__all__ = [
    "CompactionError",
    "CompactionResult",
    "CompactionSettings",
    "Compactor",
    "SummarizingProvider",
    "compact_session",
    "context_window",
    "estimate_context",
    "project",
]
