"""A `kgent` process's start (issue 37): the generated methods' bytecode from the cache, no garbage collection while
the modules load.

`start_process()` is called by the process entry points (the command line, `python -m kgent.daemon`), never by an
importer of the library: it installs kgent.core.codecache and makes `loading()` take effect.

Loading `kgent run`'s modules allocates ~70 000 objects that live as long as the process — functions, classes, their
dictionaries — and the collector would scan each of them about twice while they are young (~100 young and ~10 middle
collections: ~25 ms of its start) only to find next to nothing to free. `loading()` pauses collection while the
command and its run load; at its end the objects alive are frozen (`gc.freeze`: left out of every later collection)
and collection resumes. Freeing by reference count is unchanged; what a cycle among the start's own objects holds
stays (~0.2 MiB of RSS, once). `kgent acp` pauses while its thread loads the SDK and the agent (~30 ms of the first
prompt's wait; ~800 objects of cycles, ~0.4 MiB, stay).

The daemon cannot pause: building pygls' and lsprotocol's ~550 attrs classes leaves ~17 000 objects in cycles (~9 MiB
of RSS, kept for the process's life once pymalloc holds them). `loading(young_only=True)` collects only the young
generation while it loads, every 10 000 allocations: those cycles die young and are freed, and the survivors are not
scanned again and again as they age (the middle and old collections, most of the collector's cost during the load).
The daemon's load: ~380 → ~345 ms, RSS +0.2 MiB; spawn → first `run_start` ~40 ms sooner (docs/benchmarks.md).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_active = False


def start_process() -> None:
    """This is a `kgent` process: compile generated methods through the cache, and let `loading()` work."""
    global _active
    from kgent.core.codecache import install

    install()
    _active = True


def active() -> bool:
    return _active


YOUNG_ONLY = (10_000, 1_000, 1_000)  # the thresholds of `loading(young_only=True)`


@contextlib.contextmanager
def loading(*, young_only: bool = False) -> Iterator[None]:
    """In a `kgent` process: pause the garbage collector for the block (unless it is off already), then freeze what
    is alive and resume; with `young_only`, collect only the young generation during the block, then restore the
    thresholds. Elsewhere (a library user, the tests) nothing."""
    if not _active or not gc.isenabled():
        yield
        return
    if young_only:
        thresholds = gc.get_threshold()
        gc.set_threshold(*YOUNG_ONLY)
        try:
            yield
        finally:
            gc.set_threshold(*thresholds)
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
