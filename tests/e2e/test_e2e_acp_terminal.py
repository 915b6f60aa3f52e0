"""`kgent acp` with commands in the client's terminal (`terminal/*`, implemented for real by the test's client: it
spawns the process) and command output streamed while a command runs; over real pipes, scripted provider."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp import schema as S
from kgent_host import STATE_DIR, daemon_env
from test_e2e_acp import AGENT, Client, agent, wait_for

from kgent.sandbox.bwrap import detect


class Terminal:
    def __init__(self, proc: asyncio.subprocess.Process, limit: int | None) -> None:
        self.proc = proc
        self.limit = limit
        self.output = bytearray()
        self.truncated = False
        self.reader = asyncio.ensure_future(self._read())
        self.killed = self.released = False

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(4096):
            self.output += chunk
            if self.limit is not None and len(self.output) > self.limit:
                del self.output[: len(self.output) - self.limit]
                self.truncated = True

    def status(self) -> S.TerminalExitStatus | None:
        code = self.proc.returncode
        if code is None:
            return None
        return S.TerminalExitStatus(exit_code=code) if code >= 0 else S.TerminalExitStatus(signal=str(-code))


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the terminal's whole process group (a child such as `sleep` would otherwise hold its output open
    until it ends: a minute in the cancel test)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


class TerminalClient(Client):
    """An ACP client that offers `terminal`: each terminal is a real process it spawns and watches."""

    def __init__(self, answers: list[str] | None = None) -> None:
        super().__init__(answers)
        self.terminals: dict[str, Terminal] = {}
        self.commands: list[tuple[str, list[str], str | None]] = []

    async def create_terminal(
        self,
        command: str,
        session_id: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: list[S.EnvVariable] | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> S.CreateTerminalResponse:
        self.commands.append((command, list(args or []), cwd))
        proc = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            stdin=asyncio.subprocess.DEVNULL,
            start_new_session=True,  # its own process group: a kill reaches `sleep` too, as in an editor's terminal
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = Terminal(proc, output_byte_limit)
        return S.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> S.TerminalOutputResponse:
        t = self.terminals[terminal_id]
        if t.proc.returncode is not None:
            await t.reader
        return S.TerminalOutputResponse(
            output=t.output.decode("utf-8", "replace"), truncated=t.truncated, exit_status=t.status()
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> S.WaitForTerminalExitResponse:
        t = self.terminals[terminal_id]
        await t.proc.wait()
        await t.reader
        status = t.status()
        assert status is not None
        return S.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> S.KillTerminalResponse:
        t = self.terminals[terminal_id]
        t.killed = True
        kill_group(t.proc)
        return S.KillTerminalResponse()

    async def close(self) -> None:
        """Reap every process (the test's event loop must not close under them)."""
        for t in self.terminals.values():
            kill_group(t.proc)
            await t.proc.wait()
            await t.reader

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> S.ReleaseTerminalResponse:
        t = self.terminals[terminal_id]
        t.released = True
        if t.proc.returncode is None:
            t.proc.kill()
        return S.ReleaseTerminalResponse()


TERMINAL = S.ClientCapabilities(terminal=True)


async def test_commands_run_in_the_clients_terminal_and_are_asked_even_when_the_sandbox_would_not_ask(
    workspace: Path,
) -> None:
    (workspace / "sample.txt").write_text("x\n")
    client = TerminalClient(["allow_once", "allow_once"])
    env = daemon_env(STATE_DIR, KGENT_MODEL="list-then-count", KGENT_PERMISSION_MODE="auto")
    async with spawn_agent_process(client, *AGENT, env=env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=TERMINAL)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("list and count")])
        await client.close()
    assert done.stop_reason == "end_turn"
    # `ls` runs unasked in auto mode inside the sandbox; in the client's terminal (unsandboxed) it is asked.
    assert [a.tool_call.kind for a in client.asked] == ["execute", "execute"]
    assert client.commands == [
        ("bash", ["-c", "ls"], str(workspace)),
        ("bash", ["-c", "for i in 1 2 3; do echo line $i; sleep 0.6; done"], str(workspace)),
    ]
    assert all(t.released for t in client.terminals.values())
    embedded = [
        (u.tool_call_id, c.terminal_id)
        for u in client.updates
        if u.session_update == "tool_call_update"
        for c in u.content or []
        if c.type == "terminal"
    ]
    assert {t for _, t in embedded} == {"term-1", "term-2"}
    ends = [u for u in client.updates if u.session_update == "tool_call_update" and u.status == "completed"]
    assert [c.terminal_id for u in ends for c in u.content] == ["term-1", "term-2"]
    assert "sample.txt" in ends[0].raw_output["output"] and "line 3" in ends[1].raw_output["output"]
    # the model got the terminal's output as the tool result: the session replays it
    replayed = Client()
    async with agent(replayed) as conn:
        await conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
    results = [u for u in replayed.updates if u.session_update == "tool_call_update"]
    assert "sample.txt" in results[0].content[0].content.text

    # Without `terminal`, the same `ls` runs locally: unasked exactly when a sandbox contains it here.
    local = Client(["allow_once", "allow_once"])
    async with agent(local, "list-then-count", KGENT_PERMISSION_MODE="auto") as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("list and count")])
    assert len(local.asked) == (1 if detect().contains else 2)


async def test_cancel_kills_the_command_in_the_clients_terminal(workspace: Path) -> None:
    client = TerminalClient()
    env = daemon_env(STATE_DIR, KGENT_MODEL="long-bash", KGENT_PERMISSION_MODE="full")
    async with spawn_agent_process(client, *AGENT, env=env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=TERMINAL)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]))
        await wait_for(
            lambda: "term-1" in client.terminals and b"started" in client.terminals["term-1"].output
        )
        await conn.cancel(session_id=session.session_id)
        done = await turn
        terminal = client.terminals["term-1"]
        await wait_for(lambda: terminal.released)
        await client.close()
    assert done.stop_reason == "cancelled"
    assert terminal.killed and terminal.proc.returncode is not None and b"finished" not in terminal.output


async def test_command_output_streams_while_the_command_runs(workspace: Path) -> None:
    client = Client()
    async with agent(client, "list-then-count", KGENT_PERMISSION_MODE="full") as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("count")])
    assert done.stop_reason == "end_turn"
    counting = [u for u in client.updates if u.session_update == "tool_call"][1].tool_call_id
    live = [
        u.content[0].content.text
        for u in client.updates
        if u.session_update == "tool_call_update" and u.tool_call_id == counting and u.status == "in_progress"
        if u.content
    ]
    assert live and "line 1" in live[0] and "line 3" not in live[0]  # sent before the command ended
    final = [u for u in client.updates if getattr(u, "tool_call_id", None) == counting][-1]
    assert final.status == "completed" and "line 3" in final.content[0].content.text


async def test_an_initialize_left_to_the_sdk_still_sets_what_the_client_offers(workspace: Path) -> None:
    """`fs: null` is not what the stdlib handshake reads, so the SDK answers this `initialize`; the offer holds."""
    proc = await asyncio.create_subprocess_exec(
        *AGENT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=daemon_env(STATE_DIR, KGENT_MODEL="long-bash", KGENT_PERMISSION_MODE="full"),
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def until(done: Any) -> dict[str, Any]:
        assert proc.stdout is not None
        while not done(message := json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))):
            pass
        return message

    caps = {"fs": None, "terminal": True}
    send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": caps}})
    assert (await until(lambda m: m.get("id") == 1))["result"]["agentInfo"]["name"] == "kgent"
    send({"id": 2, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}})
    session_id = (await until(lambda m: m.get("id") == 2))["result"]["sessionId"]
    prompt = [{"type": "text", "text": "go"}]
    send({"id": 3, "method": "session/prompt", "params": {"sessionId": session_id, "prompt": prompt}})
    create = await until(lambda m: m.get("method") == "terminal/create")
    assert create["params"]["args"] == ["-c", "echo started; sleep 60; echo finished"]
    proc.stdin.close()  # the client leaves: the run is cancelled, the agent exits
    assert await asyncio.wait_for(proc.wait(), 30) == 0
