# Concept: running a Plan (kgent.sandbox.argv) without a shell — each program started from its argv, pipes and the
# `&&` / `||` / `;` list wired here the way bash would, every process group killable.
"""`PlanRun` runs a Plan with a `spawn(argv, stdin, stdout, stderr)` that starts one program (in the bash tool: bwrap
exec'ing the argv inside the sandbox); all output goes to one descriptor, as `bash -c … 2>&1` would send it."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable

from kgent.sandbox.argv import Plan, Stage
from kgent.sandbox.procgroup import exited, kill_group

Spawn = Callable[[tuple[str, ...], int, int, int], Awaitable[asyncio.subprocess.Process]]


class PlanRun:
    """One run of a Plan; `procs` are every program started (each the leader of its own process group)."""

    def __init__(self, plan: Plan, spawn: Spawn, out_fd: int, *, stdin: int | None = None) -> None:
        self.plan = plan
        self.stdin = stdin  # what each pipeline's first program reads (as a shell's list shares its stdin); None: /dev/null
        self.spawn = spawn
        self.out_fd: int | None = out_fd
        self.procs: list[asyncio.subprocess.Process] = []

    async def run(self) -> int | None:
        """The exit status of the last pipeline run (bash's: a pipeline's is its last program's, no pipefail)."""
        status: int | None = 0
        for joint, stages in self.plan.steps:
            if (joint == "&&" and status != 0) or (joint == "||" and status == 0):
                continue
            status = await self._pipeline(stages)
        return status

    async def _pipeline(self, stages: tuple[Stage, ...]) -> int | None:
        assert self.out_fd is not None
        devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        opened: list[int] = [devnull]
        started: list[asyncio.subprocess.Process] = []
        try:
            stdin = devnull if self.stdin is None else self.stdin
            for index, stage in enumerate(stages):
                last = index == len(stages) - 1
                read_end, write_end = (-1, -1) if last else os.pipe()
                if not last:
                    opened += [read_end, write_end]
                fds = {1: self.out_fd if last else write_end, 2: self.out_fd}
                for fd, source in stage.redirects:
                    fds[fd] = devnull if source is None else fds[source]
                if stage.pipe_stderr:
                    fds[2] = fds[1]
                try:
                    proc = await self.spawn(stage.argv, stdin, fds[1], fds[2])
                except Exception:
                    for earlier in started:
                        await kill_group(earlier)
                    raise
                started.append(proc)
                self.procs.append(proc)
                if stdin not in (
                    devnull,
                    self.stdin,
                ):  # the parent keeps no pipe end: a reader's exit is a writer's SIGPIPE
                    os.close(stdin)
                    opened.remove(stdin)
                if not last:
                    os.close(write_end)
                    opened.remove(write_end)
                    stdin = read_end
        finally:
            for fd in opened:
                with contextlib.suppress(OSError):
                    os.close(fd)
        await asyncio.gather(*(exited(p) for p in started))
        return started[-1].returncode

    def close(self) -> None:
        """Close the output's write end held here (once the last program has started or the run ended)."""
        if self.out_fd is not None:
            fd, self.out_fd = self.out_fd, None
            os.close(fd)

    async def kill(self) -> None:
        """Kill every program's process group (what lingers of finished ones too)."""
        for proc in self.procs:
            await kill_group(proc)
