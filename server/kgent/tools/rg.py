# Concept: ripgrep — finding the rg binary and streaming its output lines, stopping it early when done.
"""Locate `rg` (the PyPI ripgrep wheel's binary next to sys.executable first) and run it line by line."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from kgent.files.paths import PROTECTED_GLOBS

# Shared flags: hidden files searched, .gitignore honoured even outside a git repo.
BASE_FLAGS = ("--no-config", "--hidden", "--no-require-git", "--sort", "path")


def exclusions(*, protected: bool) -> list[str]:
    """Globs that skip .git (and with `protected`, every protected file). They go after any glob of the caller's:
    in rg the later glob wins, so a caller's `*` cannot bring them back."""
    names = PROTECTED_GLOBS if protected else (".git",)
    return [arg for name in names for arg in ("--iglob", f"!{name}")]


_LINE_LIMIT = 32 * 1024 * 1024


def find_rg() -> str | None:
    """Path of the rg binary, or None."""
    name = "rg.exe" if os.name == "nt" else "rg"
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


async def run_rg(
    rg: str, args: list[str], *, cwd: Path, on_line: Callable[[bytes], bool]
) -> tuple[int | None, str]:
    """Run rg with args in cwd, feeding each stdout line to on_line until it returns False.

    Returns (exit code, or None when stopped early; stderr text).
    """
    proc = await asyncio.create_subprocess_exec(
        rg,
        *args,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_LINE_LIMIT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    err_task = asyncio.create_task(proc.stderr.read(64 * 1024))
    stopped = False
    try:
        while True:
            try:
                line = await proc.stdout.readline()
            except ValueError:  # a line over the limit: skip what remains of it
                continue
            if not line:
                break
            if not on_line(line.rstrip(b"\r\n")):
                stopped = True
                break
    except BaseException:
        _kill(proc)
        err_task.cancel()
        raise
    if stopped:
        _kill(proc)
    await proc.wait()
    err = (await err_task).decode("utf-8", "replace").strip()
    return (None if stopped else proc.returncode), err


def _kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        try:
            proc.kill()
        except ProcessLookupError:
            pass
