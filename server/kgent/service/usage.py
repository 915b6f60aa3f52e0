"""A stored session as the fronts show it at rest — what its turns cost, how full the context was after its last
model call, its images' bytes for a replay — the kernel's arithmetic (kgent.kernel.cost, kgent.kernel.images) applied
to stored entries. The fronts import nothing from the kernel: they ask here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kgent.context.compaction import CompactionSettings
from kgent.core.errors import KgentError
from kgent.core.messages import AssistantMessage, Message
from kgent.kernel.config import KernelConfig
from kgent.kernel.cost import context_use, session_usage
from kgent.kernel.images import with_image_data
from kgent.providers.pricing import PriceTable
from kgent.session.entries import SessionTree
from kgent.session.store import SessionStore


def stored_usage(tree: SessionTree, prices: PriceTable) -> dict[str, Any]:
    """The token totals of every model turn the session stores (all branches: all that was paid for), with their
    cost when every turn's model has a price."""
    return session_usage(tree.entries.values(), prices)


def context_at_rest(messages: Sequence[Message], config: KernelConfig) -> dict[str, Any] | None:
    """The `context` of the branch's last model call that reported usage (as its `usage` event said it): how full
    the context was when the session was left. None when no call reported usage."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.usage is not None:
            window = CompactionSettings.resolve(config, message.provider, message.model).context_window
            return context_use(message.usage, window)
    return None


async def with_stored_images(
    store: SessionStore, session_id: str, messages: Sequence[Message]
) -> list[Message] | None:
    """`messages` with their images' bytes read back from the session's blobs (an image whose bytes are gone stays
    empty: the replay says so instead of failing); None when no image lacked its bytes."""

    async def blob(sha256: str) -> bytes:
        try:
            return await store.get_blob(session_id, sha256)
        except KgentError:
            return b""

    return await with_image_data(messages, blob)
