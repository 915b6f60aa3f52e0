"""ClientTerminalRunner: the bash tool's CommandRunner (kgent.tools.base) through the ACP client's `terminal/*`, so
commands run where the user sees them. They run in the client's process, outside Kgent's sandbox: the runner says
so (`sandboxed = False`), and the policy then asks before every shell command (docs/acp.md, "Terminals")."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from acp import Client, RequestError

from kgent.tools.base import CommandResult, ToolContext
from kgent.tools.truncate import DEFAULT_MAX_BYTES, truncate_tail

log = logging.getLogger("kgent.acp")

OUTPUT_LIMIT = (
    4 * DEFAULT_MAX_BYTES
)  # what the client keeps of a command's output (it drops the oldest bytes)


class ClientTerminalRunner:
    """Runs `bash -c` in a terminal of the client for one session. `on_terminal(tool_call_id, terminal_id)` is
    awaited once the terminal exists, so the front can embed it in the tool call before the command ends."""

    sandboxed = False
    where = "the editor's terminal"

    def __init__(
        self, client: Client, session_id: str, on_terminal: Callable[[str, str], Awaitable[None]]
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.on_terminal = on_terminal

    async def run(self, command: str, ctx: ToolContext, limit: float) -> CommandResult:
        try:
            created = await self.client.create_terminal(
                session_id=self.session_id,
                command="bash",
                args=["-c", command],
                cwd=str(ctx.workspace),
                output_byte_limit=OUTPUT_LIMIT,
            )
        except RequestError as exc:
            raise OSError(f"the editor could not open a terminal: {exc}") from None
        terminal = created.terminal_id
        try:
            await self.on_terminal(ctx.tool_call_id, terminal)
            timed_out = False
            try:
                await asyncio.wait_for(self._wait(terminal), limit)
            except TimeoutError:
                timed_out = True
                await self.client.kill_terminal(session_id=self.session_id, terminal_id=terminal)
            output = await self.client.terminal_output(session_id=self.session_id, terminal_id=terminal)
        except asyncio.CancelledError:
            await asyncio.shield(self._quietly(self.client.kill_terminal, terminal))
            raise
        except RequestError as exc:
            raise OSError(f"the editor's terminal failed: {exc}") from None
        finally:
            await asyncio.shield(self._quietly(self.client.release_terminal, terminal))
        status = output.exit_status
        text = truncate_tail(output.output.removesuffix("\n")).content or "(no output)"
        details: dict[str, object] = {"terminalId": terminal}
        if output.truncated:
            text = f"[earlier output dropped by the editor's terminal]\n{text}"
        if status is not None and status.signal:
            details["signal"] = status.signal
        code = None if timed_out or status is None else status.exit_code
        return CommandResult(output=text, exit_code=code, timed_out=timed_out, details=details)

    async def _wait(self, terminal: str) -> None:
        await self.client.wait_for_terminal_exit(session_id=self.session_id, terminal_id=terminal)

    async def _quietly(self, call: Callable[..., Awaitable[object]], terminal: str) -> None:
        """kill or release, which may fail once the client has gone: logged, never raised."""
        try:
            await call(session_id=self.session_id, terminal_id=terminal)
        except (RequestError, ConnectionError) as exc:
            log.debug("terminal %s: %s", terminal, exc)
