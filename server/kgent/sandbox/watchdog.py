# Concept: the watchdog — a tiny process beside Kgent that kills every command's process group when Kgent ends,
# however it ends: a normal exit, a crash or `kill -9` (which no handler of ours can see).
"""Kgent tells the watchdog over a pipe which process groups are its commands (`+ PGID`, `- PGID`). The watchdog
runs in its own session (a signal to Kgent's process group does not reach it) and blocks on the pipe: the kernel
closes Kgent's end when Kgent dies, for any reason, and the watchdog then sends SIGTERM, and SIGKILL after a short
grace, to every group still registered, and exits. It drops groups that have ended by itself too (a group id cannot
be reused while any member of the group lives, so a registered group that still exists is still the command's).

A command's group id is known only once its process exists, and by then it may have started children. So before it
spawns a command Kgent announces a mark (`? MARK`), which the command carries in its environment
(`KGENT_WATCHDOG=MARK`), and withdraws it once the group is registered (`! MARK`). If Kgent dies in between, the
watchdog finds the processes that carry a mark still announced (Linux's /proc/PID/environ) and kills their groups
too. A mark once withdrawn is never searched for, so what a registered command detaches from its own group is
treated as before.

Best effort, Linux and macOS alike: if the watchdog cannot start, commands run as before (bubblewrap's
`--die-with-parent` still ends sandboxed ones)."""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
import sys
import threading

# The watchdog's whole program (python -I -S: no site, no environment, no kgent import; ~15 ms to start).
_PROGRAM = r"""
import os, select, signal, time
groups, marks, buf = set(), set(), b""
def spawning():
    if not marks:
        return
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    own = os.getpgrp()
    for entry in entries:
        if entry.isdigit():
            try:
                with open("/proc/" + entry + "/environ", "rb") as f:
                    env = f.read().split(b"\0")
                if any(m in env for m in marks):
                    pgid = os.getpgid(int(entry))
                    if pgid > 1 and pgid != own:
                        groups.add(pgid)
            except OSError:
                pass
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
        op, _, arg = line.partition(b" ")
        if op in (b"+", b"-") and arg.isdigit() and int(arg) > 1:
            (groups.add if op == b"+" else groups.discard)(int(arg))
        elif op in (b"?", b"!") and arg:
            (marks.add if op == b"?" else marks.discard)(b"KGENT_WATCHDOG=" + arg)
spawning()
prune()
if groups:
    kill(signal.SIGTERM)
    deadline = time.monotonic() + 0.5
    while groups and time.monotonic() < deadline:
        time.sleep(0.02)
        prune()
spawning()  # a command that was between its fork and its exec when Kgent died
kill(signal.SIGKILL)
"""

ENV = "KGENT_WATCHDOG"

_lock = threading.Lock()
_proc: subprocess.Popen[bytes] | None = None
_groups: set[int] = set()
_marks: set[str] = set()
_serial = itertools.count(1)
_nonce = os.urandom(6).hex()


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
    if _groups or _marks:
        _send(_proc, "".join(f"+ {g}\n" for g in _groups) + "".join(f"? {m}\n" for m in _marks))
    return _proc


def _send(proc: subprocess.Popen[bytes], text: str) -> bool:
    assert proc.stdin is not None
    try:
        proc.stdin.write(text.encode())
        proc.stdin.flush()
    except (BrokenPipeError, OSError):
        return False
    return True


def _tell(text: str) -> None:
    proc = _ensure()
    if proc is not None and not _send(proc, text):
        _ensure()  # it died: a new one gets every group and mark


def expect() -> str:
    """Announce a command about to be spawned: the mark its environment carries (`ENV`) until `watch` registers its
    group, or `unexpect` withdraws it if the spawn failed."""
    with _lock:
        mark = f"{os.getpid()}.{_nonce}.{next(_serial)}"
        _marks.add(mark)
        _tell(f"? {mark}\n")
        return mark


def _withdrawn(mark: str) -> str:
    """Forget an announced mark: the line that tells the watchdog ("" if it was not announced)."""
    if mark not in _marks:
        return ""
    _marks.discard(mark)
    return f"! {mark}\n"


def unexpect(mark: str) -> None:
    """The announced command was not spawned."""
    with _lock:
        line = _withdrawn(mark)
        if line and _proc is not None and _proc.poll() is None:
            _send(_proc, line)


def watch(pgid: int, mark: str) -> None:
    """Kill process group `pgid` if Kgent dies before `forget(pgid)`: the group of the command announced as `mark`."""
    with _lock:
        _groups.add(pgid)
        _tell(f"+ {pgid}\n" + _withdrawn(mark))


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
    _marks.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
