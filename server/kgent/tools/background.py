# Concept: background commands — shell commands a run started that go on while the agent works: their process
# groups, their output (a cursor over it, spilled to a file past the limits), their stdin, and the session's limit.
"""`BackgroundCommands` holds one session's background commands (the kernel keeps one per session). A command runs
as a foreground one does (the sandbox and grant of its call; the judged argvs with no shell when it runs unasked),
in its own process group, with its stdin a pipe and its merged output read into a `CommandLog`. It ends when its
program exits (what it left in its group is then killed, as for a foreground command), or is stopped; `on_change`
hears every state change. Who stops them and when (the run's end, the daemon's exit) is the kernel's to say."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kgent.core.redact import redact
from kgent.sandbox import spill
from kgent.sandbox.procgroup import exited, kill_group
from kgent.tools.base import ToolContext
from kgent.tools.process import PIPE_GRACE, Output, open_plan_run, spawn_command, unasked_plan
from kgent.tools.truncate import format_size, truncate_tail

State = Literal["running", "exited", "stopped", "failed"]
DEFAULT_LIMIT = 8
RING_BYTES = 1024 * 1024  # the newest output kept in memory for reading; older output is in the spill file
FIRST_OUTPUT_WAIT = 1.0  # at most this long the bash tool waits for a background command's first output
QUIET = 0.2  # ... and once it printed something, until it has been quiet this long


class BackgroundError(Exception):
    """A background command cannot start or be reached (the limit, an unknown id); the message is for the model."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BackgroundInfo:
    """What a person (and the protocol) sees of one background command."""

    id: str
    command: str
    state: State
    exit_code: int | None
    started: float  # epoch seconds
    run_id: str
    tool_call_id: str
    output_bytes: int
    sandbox: str | None  # "bwrap: workspace read-only, ..." when it runs inside the sandbox


class CommandLog:
    """A background command's merged output: the newest RING_BYTES in memory, by absolute offset, and a spill file
    (its first and last 2 MB, as for foreground output) once it passes the foreground limits."""

    def __init__(self, out_dir: Path) -> None:
        self.spill = Output(out_dir, None)
        self.ring = bytearray()
        self.total = 0
        self.grew = asyncio.Event()

    def feed(self, chunk: bytes) -> None:
        self.spill.feed(chunk)
        self.ring += chunk
        self.total += len(chunk)
        if len(self.ring) > 2 * RING_BYTES:
            del self.ring[: len(self.ring) - RING_BYTES]
        self.grew.set()

    def since(self, offset: int) -> tuple[str, int]:
        """The output after `offset` (tail-truncated to the foreground limits, redacted, with a note of what was
        left out and where it is), and the offset it ends at."""
        start = self.total - len(self.ring)
        skipped = max(0, start - offset)
        data = bytes(self.ring[max(0, offset - start) :])
        text = redact(data.decode("utf-8", "replace"))
        tr = truncate_tail(text)
        out = tr.content
        left_out = skipped + (len(data) - len(tr.content.encode()) if tr.truncated else 0)
        if left_out:
            where = (
                f"; the first {format_size(spill.HEAD_BYTES)} are in {self.spill.path}"
                if self.spill.path
                else ""
            )
            out = f"[{format_size(left_out)} of earlier output not shown{where}]\n{out}"
        return out, self.total


@dataclass(slots=True, kw_only=True)
class BackgroundCommand:
    """One background command; `info()` is its public face."""

    id: str
    command: str
    run_id: str
    tool_call_id: str
    log: CommandLog
    stdin_fd: int | None
    sandbox: str | None
    state: State = "running"
    exit_code: int | None = None
    started: float = 0.0
    read_offset: int = 0  # what the model has been shown
    task: asyncio.Task[None] | None = None
    kill: Callable[[], Awaitable[None]] | None = None  # kills the process group(s)
    done: asyncio.Event | None = None

    def info(self) -> BackgroundInfo:
        return BackgroundInfo(
            id=self.id,
            command=self.command,
            state=self.state,
            exit_code=self.exit_code,
            started=self.started,
            run_id=self.run_id,
            tool_call_id=self.tool_call_id,
            output_bytes=self.log.total,
            sandbox=self.sandbox,
        )

    def status_line(self) -> str:
        if self.state == "running":
            return f"{self.id} is running"
        if self.state == "exited":
            return f"{self.id} exited with code {self.exit_code}"
        if self.state == "stopped":
            return f"{self.id} was stopped"
        return f"{self.id} was killed" if self.exit_code is None else f"{self.id} failed ({self.exit_code})"

    async def read(self, until: re.Pattern[str] | None, wait: float) -> tuple[str, bool]:
        """New output since the last read: at once, or once `until` matches the output (all of it kept so far, the
        part already read too) or the command ends, waiting at most `wait` seconds. True when the wait ended for its
        reason (not the time limit)."""
        assert self.done is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        met = False
        while True:
            if until is not None and until.search(self.log.ring.decode("utf-8", "replace")):
                met = True
                break
            if self.state != "running" or (until is None and wait <= 0):
                met = self.state != "running"
                break
            left = deadline - loop.time()
            if left <= 0:
                break
            self.log.grew.clear()
            grew = asyncio.ensure_future(self.log.grew.wait())
            ended = asyncio.ensure_future(self.done.wait())
            await asyncio.wait({grew, ended}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            grew.cancel()
            ended.cancel()
        text, self.read_offset = self.log.since(self.read_offset)
        return text, met

    def write(self, text: str) -> None:
        """Send `text` (a newline added) to the command's stdin; BackgroundError when it cannot take it."""
        if self.state != "running" or self.stdin_fd is None:
            raise BackgroundError(f"{self.status_line()}: its stdin is closed")
        data = (text if text.endswith("\n") else text + "\n").encode()
        try:
            written = os.write(self.stdin_fd, data)
        except BlockingIOError:
            raise BackgroundError(f"{self.id} is not reading its stdin (its pipe is full)") from None
        except OSError as exc:
            raise BackgroundError(f"{self.id}'s stdin is closed ({exc.strerror})") from None
        if written < len(data):
            raise BackgroundError(f"{self.id} took only {written} of {len(data)} bytes (its pipe is full)")


class BackgroundCommands:
    """One session's background commands. `limit` running at once; `on_change(info)` on every state change."""

    def __init__(
        self,
        key: str,
        *,
        limit: int = DEFAULT_LIMIT,
        on_change: Callable[[BackgroundInfo], None] | None = None,
    ) -> None:
        self.limit = limit
        self.on_change = on_change
        self.out_dir = spill.run_dir(f"background-{key}-{secrets.token_hex(4)}")
        self._commands: dict[str, BackgroundCommand] = {}
        self._count = 0

    def running(self) -> list[BackgroundCommand]:
        return [c for c in self._commands.values() if c.state == "running"]

    def list(self) -> tuple[BackgroundInfo, ...]:
        """Every command of the session, oldest first (ended ones too, with how they ended)."""
        return tuple(c.info() for c in self._commands.values())

    def get(self, command_id: str) -> BackgroundCommand:
        found = self._commands.get(command_id)
        if found is None:
            known = ", ".join(self._commands) or "none"
            raise BackgroundError(f"no background command {command_id!r} (this session's: {known})")
        return found

    async def start(self, command: str, ctx: ToolContext, run_id: str) -> BackgroundCommand:
        """Start `command` as the call of `ctx` would run it; raises BackgroundError at the limit and OSError when
        it cannot start."""
        running = self.running()
        if len(running) >= self.limit:
            ids = ", ".join(c.id for c in running)
            raise BackgroundError(
                f"at most {self.limit} background commands run at once, and {len(running)} are running ({ids}): "
                "stop one with bash_stop first"
            )
        self._count += 1
        sandbox = (
            f"{ctx.sandbox.name}: {ctx.grant.describe()}"
            if ctx.sandbox is not None and ctx.sandbox.contains and ctx.grant is not None
            else None
        )
        stdin_r, stdin_w = os.pipe()
        os.set_blocking(stdin_w, False)
        cmd = BackgroundCommand(
            id=f"bg{self._count}",
            command=command,
            run_id=run_id,
            tool_call_id=ctx.tool_call_id,
            log=CommandLog(self.out_dir),
            stdin_fd=stdin_w,
            sandbox=sandbox,
            started=time.time(),
            done=asyncio.Event(),
        )
        try:
            cmd.task, cmd.kill = await _launch(command, ctx, stdin_r, cmd)
        except BaseException:
            os.close(stdin_w)
            raise
        finally:
            os.close(stdin_r)
        self._commands[cmd.id] = cmd
        cmd.task.add_done_callback(lambda _: self._changed(cmd))
        self._changed(cmd)
        return cmd

    async def first_output(self, cmd: BackgroundCommand) -> str:
        """What the command printed in its first moments (it is not waited for longer than FIRST_OUTPUT_WAIT)."""
        assert cmd.done is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FIRST_OUTPUT_WAIT
        seen = -1
        while cmd.state == "running" and loop.time() < deadline:
            if cmd.log.total and cmd.log.total == seen:
                break  # it printed, then was quiet for QUIET
            seen = cmd.log.total
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(cmd.done.wait(), min(QUIET, max(0.0, deadline - loop.time())))
        text, cmd.read_offset = cmd.log.since(cmd.read_offset)
        return text

    async def stop(self, command_id: str) -> BackgroundCommand:
        """Kill the command's process group (SIGTERM, then SIGKILL) and wait until it has ended."""
        cmd = self.get(command_id)
        if cmd.state == "running":
            cmd.state = "stopped"
            if cmd.kill is not None:
                await cmd.kill()
        if cmd.task is not None:
            await asyncio.wait({cmd.task})
        return cmd

    async def stop_all(self) -> None:
        """Stop every running command (the session's run ended, or Kgent is exiting)."""
        for cmd in self.running():
            await self.stop(cmd.id)

    async def aclose(self) -> None:
        await self.stop_all()
        spill.release(self.out_dir.name)

    def _changed(self, cmd: BackgroundCommand) -> None:
        if self.on_change is not None:
            with contextlib.suppress(Exception):  # a failing observer must not break the command
                self.on_change(cmd.info())


async def _pump(stream: asyncio.StreamReader, log: CommandLog) -> None:
    while chunk := await stream.read(65536):
        log.feed(chunk)


def _finish(cmd: BackgroundCommand, code: int | None) -> None:
    cmd.exit_code = code
    if cmd.state == "running":
        cmd.state = "exited" if code is not None and code >= 0 else "failed"
    if cmd.stdin_fd is not None:
        with contextlib.suppress(OSError):
            os.close(cmd.stdin_fd)
        cmd.stdin_fd = None
    cmd.log.spill.close()
    assert cmd.done is not None
    cmd.done.set()


async def _launch(
    command: str, ctx: ToolContext, stdin: int, cmd: BackgroundCommand
) -> tuple[asyncio.Task[None], Callable[[], Awaitable[None]]]:
    """Start the command (the judged argvs when it runs unasked, else `bash -c`) and its supervising task."""
    plan = unasked_plan(ctx)
    if plan is None:
        proc = await spawn_command(command, ctx, stdin=stdin)
        assert proc.stdout is not None
        stdout = proc.stdout

        async def supervise() -> None:
            reader = asyncio.ensure_future(_pump(stdout, cmd.log))
            try:
                await exited(proc)
                await asyncio.wait({reader}, timeout=PIPE_GRACE)
            finally:
                await kill_group(proc)  # what it left in its group, as a foreground command's
                await asyncio.wait({reader}, timeout=PIPE_GRACE)
                reader.cancel()
                _finish(cmd, proc.returncode)

        return asyncio.ensure_future(supervise()), lambda: kill_group(proc)
    in_fd = os.dup(stdin)
    try:
        runner, stream, transport = await open_plan_run(plan, ctx, stdin=in_fd)
    except BaseException:
        os.close(in_fd)
        raise

    async def supervise_plan() -> None:
        reader = asyncio.ensure_future(_pump(stream, cmd.log))
        code: int | None = None
        try:
            code = await runner.run()
            runner.close()
            await asyncio.wait({reader}, timeout=PIPE_GRACE)
        except asyncio.CancelledError:
            code = None
        finally:
            runner.close()
            os.close(in_fd)
            await runner.kill()
            await asyncio.wait({reader}, timeout=PIPE_GRACE)
            reader.cancel()
            transport.close()
            _finish(cmd, code)

    task = asyncio.ensure_future(supervise_plan())

    async def kill() -> None:
        task.cancel()
        await asyncio.wait({task})

    return task, kill
