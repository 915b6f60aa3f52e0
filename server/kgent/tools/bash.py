# Concept: the bash tool — run a shell command in the workspace, bounded in time and output, killable as a tree.
"""`BashTool`: `bash -c` in its own process group, merged output tail-truncated, full output spilled to a file."""

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

from kgent.core.events import ToolKind
from kgent.sandbox import spill, watchdog
from kgent.sandbox.argv import Plan
from kgent.sandbox.pipeline import PlanRun
from kgent.sandbox.procgroup import become_subreaper, exited, kill_group, note_lingering, sweep_lingering
from kgent.tools.base import (
    CallDescription,
    CommandResult,
    FileChangePreview,
    ToolContext,
    ToolIntent,
    ToolOutput,
    error_output,
)
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


class _Output:
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


async def _pump(stream: asyncio.StreamReader, sink: _Output) -> None:
    while chunk := await stream.read(65536):
        sink.feed(chunk)


async def _spawn(command: str, ctx: ToolContext) -> asyncio.subprocess.Process:
    """Start the shell (inside the sandbox when the context has one) in its own session."""
    argv, env = [_shell(), "-c", command], child_env()
    if ctx.sandbox is not None and ctx.grant is not None:
        argv, env = await asyncio.to_thread(
            ctx.sandbox.wrap, argv, workspace=ctx.workspace, grant=ctx.grant, env=env
        )
    return await _start(
        argv,
        env,
        ctx.workspace,
        asyncio.subprocess.DEVNULL,
        asyncio.subprocess.PIPE,
        asyncio.subprocess.STDOUT,
    )


async def _start(
    argv: list[str], env: dict[str, str], cwd: Path, stdin: int, stdout: int, stderr: int
) -> asyncio.subprocess.Process:
    """Start a process in its own session; a cancel that lands mid-spawn still kills the whole group."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr, start_new_session=True
        )
    )
    try:
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        try:
            proc = await spawn
        except Exception:
            raise asyncio.CancelledError from None
        watchdog.watch(proc.pid)
        await kill_group(proc)
        raise
    watchdog.watch(proc.pid)  # killed with its group if Kgent dies first, `kill -9` included
    return proc


def _unasked_plan(ctx: ToolContext) -> Plan | None:
    """The classifier's argvs when this call runs unasked inside the sandbox (then no shell runs at all)."""
    grant, sandbox = ctx.grant, ctx.sandbox
    if grant is None or grant.approved or grant.plan is None or sandbox is None or not sandbox.contains:
        return None
    return grant.plan


class BashTool:
    """Run a shell command."""

    name = "bash"
    kind: ToolKind = "execute"
    read_only = False
    intent = ToolIntent(effect="execute", command_arg="command")
    description = (
        "Execute a bash command in the workspace directory (stdin is closed; stdout and stderr are merged). "
        f"Output is truncated to the last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB; when "
        "truncated, the full output (its first and last 2MB if longer) is saved, for this run only, to a file whose "
        "path is given. A non-zero exit code is reported as "
        "an error. Commands time out (default 120 seconds; set timeout in seconds to change it). Background "
        "processes that still hold the output open when the command ends are stopped; redirect their output "
        "(cmd > log 2>&1 &) to keep them running. Prefer the read, grep, find and ls tools for inspecting files."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "Bash command to execute"},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": "Timeout in seconds (default 120)",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        """'Run `<command>`'."""
        command = str(args.get("command") or "")
        first = command.strip().splitlines()[0] if command.strip() else ""
        short = first if len(first) <= 80 and "\n" not in command.strip() else first[:77] + "..."
        return CallDescription(title=f"Run `{short}`", command=command)

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        """A command's effect cannot be previewed."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Run the command through the context's runner (locally by default); a timeout or cancel stops it."""
        command: str = args[
            "command"
        ]  # arguments arrive checked against `parameters` (kgent.kernel.arguments)
        timeout = float(args.get("timeout") or ctx.bash_timeout)
        if not command.strip():
            return error_output("Command is empty")
        try:
            result = await (ctx.runner or LOCAL_RUNNER).run(command, ctx, timeout)
        except OSError as e:
            return error_output(f"Failed to start command: {e}")
        out, details = result.output, {**result.details, "exitCode": result.exit_code}
        if result.timed_out:
            details["timedOut"] = True
            return ToolOutput(
                content=f"{out}\n\nCommand timed out after {timeout:g} seconds",
                is_error=True,
                details=details,
            )
        if result.exit_code != 0:
            ending = "was killed" if result.exit_code is None else f"exited with code {result.exit_code}"
            return ToolOutput(content=f"{out}\n\nCommand {ending}", is_error=True, details=details)
        return ToolOutput(content=f"{out}\n\nExit code: 0", details=details)


class LocalCommandRunner:
    """Runs `bash -c` here, in its own process group (inside the sandbox when the call has a grant) — or, for a call
    that runs unasked, the classifier's argvs with no shell at all; the merged output streams to `ctx.on_update` and
    is spilled to a file past the limits."""

    sandboxed = True
    where = "this machine"

    async def run(self, command: str, ctx: ToolContext, limit: float) -> CommandResult:
        become_subreaper()
        sweep_lingering()
        sink = _Output(ctx.output_dir, ctx.on_update)
        plan = _unasked_plan(ctx)
        try:
            if plan is not None:
                code, timed_out = await self._run_plan(plan, ctx, sink, limit)
            else:
                proc = await _spawn(command, ctx)
                timed_out = await self._supervise(proc, sink, limit)
                code = proc.returncode
        finally:
            sink.close()
        out, details = sink.render()
        if ctx.sandbox is not None and ctx.sandbox.contains and ctx.grant is not None:
            details["sandbox"] = f"{ctx.sandbox.name}: {ctx.grant.describe()}"
        return CommandResult(
            output=out, exit_code=None if timed_out else code, timed_out=timed_out, details=details
        )

    @staticmethod
    async def _run_plan(
        plan: Plan, ctx: ToolContext, sink: _Output, seconds: float
    ) -> tuple[int | None, bool]:
        """Run the judged argvs, each program exec'd by bwrap directly, pipes and `&&`/`||`/`;` wired here; the
        merged output, timeout and cancellation behave as for `bash -c`."""
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

        async def spawn(
            argv: tuple[str, ...], stdin: int, stdout: int, stderr: int
        ) -> asyncio.subprocess.Process:
            return await _start([*prefix, *argv], env, ctx.workspace, stdin, stdout, stderr)

        runner = PlanRun(plan, spawn, write_fd)
        reader = asyncio.create_task(_pump(stream, sink))
        task = asyncio.create_task(runner.run())
        try:
            done, _ = await asyncio.wait({task}, timeout=seconds)
            timed_out = not done
            if timed_out:
                task.cancel()
                await asyncio.wait({task})
            runner.close()
            if not timed_out:
                await asyncio.wait({reader}, timeout=PIPE_GRACE)
            if timed_out or not reader.done():
                await runner.kill()
                await asyncio.wait({reader}, timeout=PIPE_GRACE)
            else:
                for proc in runner.procs:
                    note_lingering(proc)
            return (None if timed_out else task.result()), timed_out
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.wait({task})
            await runner.kill()
            raise
        finally:
            runner.close()
            if not reader.done():
                reader.cancel()
            transport.close()

    @staticmethod
    async def _supervise(proc: asyncio.subprocess.Process, sink: _Output, seconds: float) -> bool:
        assert proc.stdout is not None
        reader = asyncio.create_task(_pump(proc.stdout, sink))
        waiter = asyncio.create_task(exited(proc))
        try:
            done, _ = await asyncio.wait({waiter}, timeout=seconds)
            timed_out = not done
            if not timed_out:
                await asyncio.wait({reader}, timeout=PIPE_GRACE)
            if timed_out or not reader.done():
                await kill_group(proc)
                await asyncio.wait({reader}, timeout=PIPE_GRACE)
            else:
                note_lingering(proc)
            return timed_out
        except asyncio.CancelledError:
            await kill_group(proc)
            raise
        finally:
            for task in (reader, waiter):
                if not task.done():
                    task.cancel()


LOCAL_RUNNER = LocalCommandRunner()
