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

The daemon's loader pauses too (its ~0.2 s load: pydantic, the wire models, the service's stack): ~700 objects of
cycles stay. (While it loaded pygls, whose lsprotocol classes leave ~17 000 objects in cycles, a pause would have kept
~9 MiB, so it collected the young generation only; docs/adr/0006.)
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_active = False


def start_process() -> None:
    """This is a `kgent` process: nothing imported from the directory it started in, generated methods compiled
    through the cache, and `loading()` at work."""
    global _active
    from kgent.core.codecache import install

    _not_from_the_working_directory()
    install()
    _active = True


def _not_from_the_working_directory() -> None:
    """`python -m kgent` and `python -m kgent.daemon` put the directory they start in — the workspace — first on
    `sys.path`. Kgent imports modules lazily (`tomllib` once a rule file is there, and many more), so a project's own
    `tomllib.py` would run inside Kgent, outside any sandbox, without a question. The `kgent` command's path starts
    with its own bin directory instead; nothing of Kgent is ever found in the working directory this way (the
    package is imported already)."""
    import os
    import sys

    if sys.path and sys.path[0] and sys.flags.safe_path == 0:
        try:
            here = os.getcwd()
        except OSError:
            return
        if os.path.abspath(sys.path[0]) == here:
            del sys.path[0]


def active() -> bool:
    return _active


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """In a `kgent` process: pause the garbage collector for the block (unless it is off already), then freeze what
    is alive and resume. Elsewhere (a library user, the tests) nothing."""
    if not _active or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
