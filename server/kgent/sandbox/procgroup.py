# Concept: process groups — killing a command's whole process tree and reaping what it leaves behind.
"""Signal, wait for and reap a subprocess's process group (the subprocess runs with start_new_session=True)."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys

from kgent.sandbox import watchdog

TERM_GRACE = 0.5  # seconds between SIGTERM and SIGKILL
_PR_SET_CHILD_SUBREAPER = 36
_subreaper_tried = False
_lingering: dict[int, asyncio.subprocess.Process] = {}  # groups whose orphans may still need reaping


def become_subreaper() -> None:
    """On Linux, adopt orphaned descendants so killed grandchildren can be reaped (idempotent, best effort)."""
    global _subreaper_tried
    if _subreaper_tried or not sys.platform.startswith("linux"):
        return
    _subreaper_tried = True
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def group_exists(pgid: int) -> bool:
    """Whether any process (zombies included) is still in the group."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, sig: int) -> None:
    """Send a signal to the group, ignoring a group that is already gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def reap_group(proc: asyncio.subprocess.Process) -> bool:
    """Reap exited children of ours in the leader's group, once the leader itself has been reaped.

    Returns True when no children of ours are left in the group.
    """
    if proc.returncode is None:
        return False  # the event loop's child watcher owns the leader; reaping now could steal its status
    while True:
        try:
            pid, _ = os.waitpid(-proc.pid, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return False


def sweep_lingering() -> None:
    """Reap leftovers of earlier commands' groups; forget groups with no children of ours left."""
    for pgid, proc in list(_lingering.items()):
        if reap_group(proc):
            del _lingering[pgid]
            _forget_if_gone(pgid)


def note_lingering(proc: asyncio.subprocess.Process) -> None:
    """Remember a finished command's group if members remain (e.g. a daemon it started)."""
    if not reap_group(proc):
        _lingering[proc.pid] = proc
    else:
        _forget_if_gone(proc.pid)


def _forget_if_gone(pgid: int) -> None:
    """A group with no member left needs no killing when Kgent dies (kgent.sandbox.watchdog)."""
    if not group_exists(pgid):
        watchdog.forget(pgid)


async def _wait_gone(proc: asyncio.subprocess.Process, seconds: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        reap_group(proc)
        if not group_exists(proc.pid):
            watchdog.forget(proc.pid)
            return True
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.02)


async def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the group, SIGKILL it after a short grace, then wait (bounded) until it is gone and reaped."""
    pgid = proc.pid
    signal_group(pgid, signal.SIGTERM)
    try:
        if not await _wait_gone(proc, TERM_GRACE):
            signal_group(pgid, signal.SIGKILL)
            if not await _wait_gone(proc, 2.0):
                _lingering[pgid] = proc
    except asyncio.CancelledError:
        signal_group(pgid, signal.SIGKILL)
        _lingering[pgid] = proc
        raise


async def exited(proc: asyncio.subprocess.Process) -> None:
    """Return once the process has exited and asyncio has its return code (its pipes may still be open)."""
    # Not proc.wait(): since 3.11.x it also waits for the pipes to close, which a background grandchild can delay.
    # A pidfd says the moment the shell exits (Linux 5.3+); then asyncio's child watcher sets the return code.
    await _pidfd_exit(proc)
    delay = 0.0005
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)


async def _pidfd_exit(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None or not hasattr(os, "pidfd_open"):
        return
    try:
        fd = os.pidfd_open(proc.pid)
    except OSError:  # already reaped, or a kernel without pidfds: the polling loop does it
        return
    loop = asyncio.get_running_loop()
    readable: asyncio.Future[None] = loop.create_future()

    def exited() -> None:
        if not readable.done():
            readable.set_result(None)

    loop.add_reader(fd, exited)
    try:
        await readable
    finally:
        loop.remove_reader(fd)
        os.close(fd)
