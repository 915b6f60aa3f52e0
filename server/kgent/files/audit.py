# Concept: the mark the files package puts on the I/O it does itself, so a test can tell an open that went through
# the one gate (kgent.files.gate and its helpers) from a module opening a workspace path on its own.
"""`gated()` marks the calls inside it (a context variable: it follows them into worker threads, as
`asyncio.to_thread` copies the context); `is_gated()` says whether the current I/O carries the mark."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_MARK: ContextVar[bool] = ContextVar("kgent_files_gate", default=False)


@contextlib.contextmanager
def gated() -> Iterator[None]:
    """Mark the I/O done inside the block as the files gate's."""
    token = _MARK.set(True)
    try:
        yield
    finally:
        _MARK.reset(token)


def is_gated() -> bool:
    """Whether the I/O being done now was started by the files gate."""
    return _MARK.get()
