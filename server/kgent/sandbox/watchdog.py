# Concept: the watchdog — a tiny process beside Kgent that kills every command's process group when Kgent ends,
# however it ends: a normal exit, a crash or `kill -9` (which no handler of ours can see).
"""Kgent tells the watchdog over a pipe which process groups are its commands (`+ PGID`, `- PGID`). The watchdog
runs in its own session (a signal to Kgent's process group does not reach it) and blocks on the pipe: the kernel
closes Kgent's end when Kgent dies, for any reason, and the watchdog then sends SIGTERM, and SIGKILL after a short
grace, to every group still registered, and exits. It drops groups that have ended by itself too (a group id cannot
be reused while any member of the group lives, so a registered group that still exists is still the command's).

Best effort, Linux and macOS alike: if the watchdog cannot start, commands run as before (bubblewrap's
`--die-with-parent` still ends sandboxed ones)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading

# The watchdog's whole program (python -I -S: no site, no environment, no kgent import; ~15 ms to start).
_PROGRAM = r"""
import os, select, signal, time
groups, buf = set(), b""
def prune():
    for g in list(groups):
        try:
            os.killpg(g, 0)
        except ProcessLookupError:
            groups.discard(g)
        except OSError:
            pass
def kill(sig):
    for g in groups:
        try:
            os.killpg(g, sig)
        except OSError:
            pass
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
    signal.signal(s, signal.SIG_IGN)
while True:
    ready, _, _ = select.select([0], [], [], 2.0)
    if not ready:
        prune()
        continue
    data = os.read(0, 65536)
    if not data:
        break
    *lines, buf = (buf + data).split(b"\n")
    for line in lines:
        op, _, pgid = line.partition(b" ")
        if pgid.isdigit() and int(pgid) > 1:
            (groups.add if op == b"+" else groups.discard)(int(pgid))
prune()
if groups:
    kill(signal.SIGTERM)
    deadline = time.monotonic() + 0.5
    while groups and time.monotonic() < deadline:
        time.sleep(0.02)
        prune()
    kill(signal.SIGKILL)
"""

_lock = threading.Lock()
_proc: subprocess.Popen[bytes] | None = None
_groups: set[int] = set()


def _ensure() -> subprocess.Popen[bytes] | None:
    """The running watchdog (started, or restarted with every known group, when needed); None if it cannot run."""
    global _proc
    if _proc is not None and _proc.poll() is None:
        return _proc
    try:
        _proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _PROGRAM],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        _proc = None
        return None
    if _groups:
        _send(_proc, "".join(f"+ {g}\n" for g in _groups))
    return _proc


def _send(proc: subprocess.Popen[bytes], text: str) -> bool:
    assert proc.stdin is not None
    try:
        proc.stdin.write(text.encode())
        proc.stdin.flush()
    except (BrokenPipeError, OSError):
        return False
    return True


def watch(pgid: int) -> None:
    """Kill process group `pgid` if Kgent dies before `forget(pgid)`."""
    with _lock:
        _groups.add(pgid)
        proc = _ensure()
        if proc is not None and not _send(proc, f"+ {pgid}\n"):
            _ensure()  # it died: a new one gets every group


def forget(pgid: int) -> None:
    """The group has ended (or is stopped by other means): the watchdog no longer needs to kill it."""
    with _lock:
        if pgid not in _groups:
            return
        _groups.discard(pgid)
        if _proc is not None and _proc.poll() is None:
            _send(_proc, f"- {pgid}\n")


def watched() -> frozenset[int]:
    """The groups registered now (for tests and diagnostics)."""
    with _lock:
        return frozenset(_groups)


def pid() -> int | None:
    """The watchdog's process id, when it runs."""
    with _lock:
        return _proc.pid if _proc is not None and _proc.poll() is None else None


def stop() -> None:
    """End the watchdog now (it kills what is still registered, as when Kgent exits)."""
    global _proc
    with _lock:
        proc, _proc = _proc, None
    if proc is not None and proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


def _after_fork_in_child() -> None:
    """A forked child is not Kgent: it must not hold the pipe open (its exit would then not be Kgent's)."""
    global _proc
    if _proc is not None and _proc.stdin is not None:
        with contextlib.suppress(OSError):
            os.close(_proc.stdin.fileno())
    _proc = None
    _groups.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
