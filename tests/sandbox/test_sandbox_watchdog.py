"""The watchdog (kgent.sandbox.watchdog) ends a command's processes when Kgent is killed, even when Kgent dies
between spawning the command and registering its group, the moment a group id cannot be known yet. Each test runs
a small "Kgent" as a real subprocess, kills it with SIGKILL and looks for its commands in /proc by a marker only
they carry."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time

from helpers import PATIENCE, processes_with

# Spawns `sh -c COMMAND` as start_process does (its own session, the announced mark in its environment), registers
# its group only if told to, prints "up" once the command's processes exist, then waits to be killed.
_KGENT = r"""
import os, subprocess, sys, time
from kgent.sandbox import watchdog
command, register = sys.argv[1], sys.argv[2] == "register"
mark = watchdog.expect()
proc = subprocess.Popen(["sh", "-c", command], env={**os.environ, watchdog.ENV: mark}, start_new_session=True)
if register:
    watchdog.watch(proc.pid, mark)
print("up", flush=True)
time.sleep(600)
"""


def until(condition, within: float = PATIENCE) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def kgent_killed_with(command: str, marker: str, *, register: bool) -> None:
    """Run the small Kgent with `command`, and SIGKILL it once two processes carry `marker`."""
    kgent = subprocess.Popen(
        [sys.executable, "-c", _KGENT, command, "register" if register else "no"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert kgent.stdout is not None and kgent.stdout.readline() == "up\n"
    assert until(lambda: len(processes_with(marker)) >= 2), "the command did not start"
    kgent.kill()
    assert kgent.wait() == -signal.SIGKILL


def test_a_command_whose_group_was_not_yet_registered_dies_with_kgent() -> None:
    marker = f"1000.{secrets.randbelow(10**6):06d}"  # sleep reads it as seconds
    kgent_killed_with(f"sleep {marker} & sleep {marker}", marker, register=False)
    assert until(lambda: not processes_with(marker)), f"orphans after kill -9: {processes_with(marker)}"


def test_what_a_registered_command_detached_from_its_group_is_left_as_before() -> None:
    """Only a mark still announced is searched for: a registered command's group dies, and a process it moved to a
    session of its own (a server it meant to outlive it) is not hunted down by its environment."""
    own, detached = (f"1000.{secrets.randbelow(10**6):06d}" for _ in range(2))
    try:
        kgent_killed_with(f"setsid sleep {detached} & sleep {own}; : {detached}", detached, register=True)
        assert until(lambda: not processes_with(own)), f"orphans after kill -9: {processes_with(own)}"
        assert processes_with(detached), "a process outside the command's group was killed"
    finally:
        for pid in processes_with(detached):
            os.kill(pid, signal.SIGKILL)
