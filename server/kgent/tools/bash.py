# Concept: the bash tool — run a shell command in the workspace, bounded in time and output, killable as a tree.
"""`BashTool`: `bash -c` in its own process group, merged output tail-truncated, full output spilled to a file."""

from __future__ import annotations

import asyncio
from typing import Any

from kgent.core.events import ToolKind
from kgent.sandbox.argv import Plan
from kgent.sandbox.procgroup import become_subreaper, exited, kill_group, note_lingering, sweep_lingering
from kgent.tools.background import BackgroundError
from kgent.tools.base import (
    CallDescription,
    CommandResult,
    FileChangePreview,
    ToolContext,
    ToolIntent,
    ToolOutput,
    error_output,
)
from kgent.tools.process import (
    PIPE_GRACE,
    Output,
    child_env,
    open_plan_run,
    pump,
    spawn_command,
    unasked_plan,
)
from kgent.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES

__all__ = ["LOCAL_RUNNER", "BashTool", "LocalCommandRunner", "child_env"]


class BashTool:
    """Run a shell command."""

    name = "bash"
    kind: ToolKind = "execute"
    read_only = False
    intent = ToolIntent(effect="execute", command_arg="command")
    description = (
        "Execute a bash command in the workspace directory (stdin is closed; stdout and stderr are merged). "
        f"Output is truncated to the last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB; when "
        "truncated, the full output (its first and last 2MB if longer) is saved with the session to a file whose "
        "path is given. A non-zero exit code is reported as "
        "an error. Commands time out (default 120 seconds; set timeout in seconds to change it). Background "
        "processes that still hold the output open when the command ends are stopped; redirect their output "
        "(cmd > log 2>&1 &) to keep them running. Prefer the read, grep, find and ls tools for inspecting files. "
        "Set background: true for a command that keeps running (a server, a watcher): it returns at once with an "
        "id and the first output; read what it prints with bash_output, send it a line with bash_input, stop it "
        "with bash_stop. Background commands are stopped when the run ends."
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
            "background": {
                "type": "boolean",
                "description": "Run in the background: return at once with an id (no timeout)",
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
        if args.get("background") is True:  # the card says it: approving it lets it go on after the call
            return CallDescription(title=f"Run in the background (keeps running) `{short}`", command=command)
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
        if args.get("background") is True:
            return await self._background(command, ctx)
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

    async def _background(self, command: str, ctx: ToolContext) -> ToolOutput:
        """Start the command in the background; its id and what it printed first."""
        if ctx.background is None:
            return error_output("Background commands are not available here")
        if ctx.runner is not None and not isinstance(ctx.runner, LocalCommandRunner):
            return error_output(
                f"Background commands run on Kgent's machine; commands here run in {ctx.runner.where}"
            )
        become_subreaper()
        try:
            cmd = await ctx.background.start(command, ctx, ctx.run_id)
        except BackgroundError as exc:
            return error_output(str(exc))
        except OSError as e:
            return error_output(f"Failed to start command: {e}")
        first = await ctx.background.first_output(cmd)
        details: dict[str, Any] = {"backgroundId": cmd.id, "state": cmd.state}
        if cmd.sandbox is not None:
            details["sandbox"] = cmd.sandbox
        if cmd.exit_code is not None:
            details["exitCode"] = cmd.exit_code
        head = (
            f"Started {cmd.id} in the background"
            if cmd.state == "running"
            else f"Started {cmd.id}; it ended already ({cmd.status_line()})"
        )
        return ToolOutput(
            content=f"{head}. Its output so far:\n{first or '(no output)'}",
            is_error=cmd.state == "failed",
            details=details,
        )


class LocalCommandRunner:
    """Runs `bash -c` here, in its own process group (inside the sandbox when the call has a grant) — or, for a call
    that runs unasked, the classifier's argvs with no shell at all; the merged output streams to `ctx.on_update` and
    is spilled to a file past the limits."""

    sandboxed = True
    where = "this machine"

    async def run(self, command: str, ctx: ToolContext, limit: float) -> CommandResult:
        become_subreaper()
        sweep_lingering()
        sink = Output(ctx.output_dir, ctx.on_update)
        plan = unasked_plan(ctx)
        try:
            if plan is not None:
                code, timed_out = await self._run_plan(plan, ctx, sink, limit)
            else:
                proc = await spawn_command(command, ctx)
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
        plan: Plan, ctx: ToolContext, sink: Output, seconds: float
    ) -> tuple[int | None, bool]:
        """Run the judged argvs, each program exec'd by bwrap directly, pipes and `&&`/`||`/`;` wired here; the
        merged output, timeout and cancellation behave as for `bash -c`."""
        runner, stream, transport = await open_plan_run(plan, ctx)
        reader = asyncio.create_task(pump(stream, sink))
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
    async def _supervise(proc: asyncio.subprocess.Process, sink: Output, seconds: float) -> bool:
        assert proc.stdout is not None
        reader = asyncio.create_task(pump(proc.stdout, sink))
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
