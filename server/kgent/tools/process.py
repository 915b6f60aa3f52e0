# Concept: how a shell command's process runs here — its environment, its own session and process group (watched,
# so it dies with Kgent), its merged output collected and spilled; shared by foreground and background commands.
"""Process plumbing of the bash tool and of background commands (kgent.tools.background)."""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from kgent.sandbox import spill, watchdog
from kgent.sandbox.argv import Plan
from kgent.sandbox.pipeline import PlanRun
from kgent.sandbox.procgroup import kill_group
from kgent.tools.base import ToolContext
from kgent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_tail

PIPE_GRACE = 0.5  # after the shell exits, how long a background process may keep the output pipe open
UPDATE_INTERVAL = 0.1
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|AUTH", re.IGNORECASE)


def child_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for commands: the parent's minus anything that looks like a credential."""
    env = dict(os.environ if base is None else base)
    return {k: v for k, v in env.items() if not _SECRET_ENV.search(k)}


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


class Output:
    """Collects merged output: the whole of it in memory until it exceeds the limits, then spilled to a private
    file that keeps the first spill.HEAD_BYTES and the last spill.TAIL_BYTES (what lies between is counted)."""

    def __init__(self, out_dir: Path | None, on_update: Callable[[str], None] | None) -> None:
        self.out_dir = out_dir
        self.on_update = on_update
        self.buf = bytearray()
        self.total = 0
        self.newlines = 0
        self.cur_line = 0  # bytes since the last newline
        self.prev_line = 0  # length of the line the last newline ended
        self.fd: int | None = None
        self.path: Path | None = None
        self.written = 0  # bytes of the head in the file
        self.tail = bytearray()  # past the head: the newest bytes, up to spill.TAIL_BYTES
        self.dropped = 0
        self._last_update = 0.0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        n = chunk.count(b"\n")
        if n:
            self.newlines += n
            last = chunk.rfind(b"\n")
            prev = chunk.rfind(b"\n", 0, last)
            self.prev_line = last - prev - 1 if prev >= 0 else self.cur_line + last
            self.cur_line = len(chunk) - last - 1
        else:
            self.cur_line += len(chunk)
        self.buf += chunk
        if self.fd is None and (self.total > DEFAULT_MAX_BYTES or self.newlines >= DEFAULT_MAX_LINES):
            directory = self.out_dir or spill.root()
            self.path = directory / f"kgent-bash-{secrets.token_hex(8)}.log"
            self.fd = spill.open_private(directory, self.path.name)
            self._spill(bytes(self.buf))
        elif self.fd is not None:
            self._spill(chunk)
        if len(self.buf) > 4 * DEFAULT_MAX_BYTES:
            del self.buf[: len(self.buf) - 2 * DEFAULT_MAX_BYTES]
        now = time.monotonic()
        if self.on_update is not None and now - self._last_update >= UPDATE_INTERVAL:
            self._last_update = now
            try:
                self.on_update(
                    truncate_tail(self.buf[-DEFAULT_MAX_BYTES:].decode("utf-8", "replace")).content
                )
            except Exception:  # a failing observer must not break the command
                self.on_update = None

    def _spill(self, data: bytes) -> None:
        assert self.fd is not None
        room = spill.HEAD_BYTES - self.written
        if room > 0:
            head = data[:room]
            _write_all(self.fd, head)
            self.written += len(head)
            data = data[len(head) :]
        if data:
            self.tail += data
            if len(self.tail) > spill.TAIL_BYTES:
                cut = len(self.tail) - spill.TAIL_BYTES
                self.dropped += cut
                del self.tail[:cut]

    def close(self) -> None:
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        try:
            if self.dropped:
                _write_all(
                    fd, f"\n[... {format_size(self.dropped)} ({self.dropped} bytes) dropped ...]\n".encode()
                )
            _write_all(fd, bytes(self.tail))
            self.tail.clear()
        finally:
            os.close(fd)

    def render(self) -> tuple[str, dict[str, Any]]:
        """Tail-truncated text with Pi's notices, and details (truncation, full_output_path)."""
        spilled = self.path is not None
        self.close()
        text = self.buf.decode("utf-8", "replace")
        total, newlines, last_line = self.total, self.newlines, self.cur_line
        if text.endswith("\n"):
            text, total, newlines, last_line = text[:-1], total - 1, newlines - 1, self.prev_line
        tr = truncate_tail(text)
        if spilled:
            tr = replace(tr, total_lines=newlines + 1, total_bytes=total)
        details: dict[str, Any] = {}
        out = tr.content or "(no output)"
        if not tr.truncated:
            if self.path is not None:
                self.path.unlink(missing_ok=True)
                self.path = None
            return out, details
        details["truncation"] = tr.as_dict()
        details["fullOutputPath"] = str(self.path)
        where = f"Full output: {self.path}"
        if self.dropped:
            details["outputDroppedBytes"] = self.dropped
            where = (
                f"Output saved to {self.path}: its first {format_size(spill.HEAD_BYTES)} and last "
                f"{format_size(spill.TAIL_BYTES)}, {format_size(self.dropped)} between them dropped"
            )
        start, end = tr.total_lines - tr.output_lines + 1, tr.total_lines
        if tr.last_line_partial:
            out += (
                f"\n\n[Showing last {format_size(tr.output_bytes)} of line {end} (line is {format_size(last_line)}). "
                f"{where}]"
            )
        elif tr.truncated_by == "lines":
            out += f"\n\n[Showing lines {start}-{end} of {tr.total_lines}. {where}]"
        else:
            out += f"\n\n[Showing lines {start}-{end} of {tr.total_lines} ({format_size(DEFAULT_MAX_BYTES)} limit). {where}]"
        return out, details


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def pump(stream: asyncio.StreamReader, sink: Output) -> None:
    while chunk := await stream.read(65536):
        sink.feed(chunk)


async def spawn_command(
    command: str, ctx: ToolContext, *, stdin: int = asyncio.subprocess.DEVNULL
) -> asyncio.subprocess.Process:
    """Start the shell (inside the sandbox when the context has one) in its own session, its merged output piped."""
    argv, env = [_shell(), "-c", command], child_env()
    if ctx.sandbox is not None and ctx.grant is not None:
        argv, env = await asyncio.to_thread(
            ctx.sandbox.wrap, argv, workspace=ctx.workspace, grant=ctx.grant, env=env
        )
    return await start_process(
        argv,
        env,
        ctx.workspace,
        stdin,
        asyncio.subprocess.PIPE,
        asyncio.subprocess.STDOUT,
    )


async def start_process(
    argv: list[str], env: dict[str, str], cwd: Path, stdin: int, stdout: int, stderr: int
) -> asyncio.subprocess.Process:
    """Start a process in its own session, known to the watchdog from before it exists (killed with its group if
    Kgent dies first, `kill -9` included); a cancel that lands mid-spawn still kills the whole group."""
    mark = watchdog.expect()
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env={**env, watchdog.ENV: mark},
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    )
    try:
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        try:
            proc = await spawn
        except Exception:
            watchdog.unexpect(mark)
            raise asyncio.CancelledError from None
        watchdog.watch(proc.pid, mark)
        await kill_group(proc)
        raise
    except BaseException:
        watchdog.unexpect(mark)
        raise
    watchdog.watch(proc.pid, mark)
    return proc


def unasked_plan(ctx: ToolContext) -> Plan | None:
    """The classifier's argvs when this call runs unasked inside the sandbox (then no shell runs at all)."""
    grant, sandbox = ctx.grant, ctx.sandbox
    if grant is None or grant.approved or grant.plan is None or sandbox is None or not sandbox.contains:
        return None
    return grant.plan


async def open_plan_run(
    plan: Plan, ctx: ToolContext, *, stdin: int | None = None
) -> tuple[PlanRun, asyncio.StreamReader, asyncio.ReadTransport]:
    """The judged argvs ready to run, each program exec'd by bwrap directly (no shell reads them again), their merged
    output on one pipe: the runner, the pipe's reader and its transport (the caller closes both)."""
    assert ctx.sandbox is not None and ctx.grant is not None
    prefix, env = await asyncio.to_thread(
        ctx.sandbox.wrap, [], workspace=ctx.workspace, grant=ctx.grant, env=child_env()
    )
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    stream = asyncio.StreamReader(limit=2**20)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream), os.fdopen(read_fd, "rb", buffering=0)
        )
    except BaseException:
        os.close(read_fd)
        os.close(write_fd)
        raise

    async def spawn(argv: tuple[str, ...], sin: int, sout: int, serr: int) -> asyncio.subprocess.Process:
        return await start_process([*prefix, *argv], env, ctx.workspace, sin, sout, serr)

    return PlanRun(plan, spawn, write_fd, stdin=stdin), stream, transport
