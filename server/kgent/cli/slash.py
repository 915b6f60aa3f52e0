"""`kgent run "/name args"`: the prompt's slash command expanded as the service does for every front
(kgent.service.commands); `/compact` compacts the `--session` instead of starting a run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kgent.core.errors import KgentError
from kgent.service.commands import Expansion, expand
from kgent.service.errors import ServiceError


async def expand_prompt(kernel: Any, prompt: str, workspace: Path, session: str | None) -> Expansion:
    """The run's prompt; raises KgentError (usage) for an unknown command or one that needs a session."""
    tree = await kernel.store.load(session) if session else None
    try:
        expansion = expand(prompt, workspace, os.environ, tree=tree)
    except ServiceError as exc:
        raise KgentError(exc.message, code=exc.name) from None
    if expansion.builtin == "compact" and not session:
        raise KgentError("/compact needs --session ID: a new session has nothing to compact", code="usage")
    return expansion


async def compact(kernel: Any, session: str, focus: str) -> dict[str, Any]:
    """`/compact [focus]` on `session` (as `kgent sessions compact`): what to print."""
    from kgent.context.compaction import compact_session

    done = await compact_session(
        kernel.store, kernel.provider, session, config=kernel.config, focus=focus or None
    )
    if done is None:
        return {"compacted": False, "sessionId": session}
    return {
        "compacted": True,
        "sessionId": session,
        "entryId": done.entry.id,
        "tokensBefore": done.tokens_before,
        "tokensAfter": done.tokens_after,
    }
