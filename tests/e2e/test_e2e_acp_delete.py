"""ACP's session/delete over raw pipes (the Python SDK's client has no method for it, the TS SDK's has): the session
leaves the store, and deleting or loading it again is not found."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from kgent_host import daemon_env


class Raw:
    """`kgent acp` as a subprocess; requests are JSON lines, the notifications between answers are skipped."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        line = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(line).encode() + b"\n")
        await self.proc.stdin.drain()
        while True:
            message = json.loads(await asyncio.wait_for(self.proc.stdout.readline(), 60))
            if message.get("id") == self.next_id and "method" not in message:
                return dict(message)


async def test_session_delete_removes_the_session(tmp_path: Path) -> None:
    state = tmp_path / "state"
    ws = tmp_path / "ws"
    ws.mkdir()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kgent",
        "acp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=daemon_env(str(state), KGENT_MODEL="hello"),
    )
    agent = Raw(proc)
    try:
        init = await agent.request("initialize", {"protocolVersion": 1})
        assert "delete" in init["result"]["agentCapabilities"]["sessionCapabilities"]
        sid = (await agent.request("session/new", {"cwd": str(ws), "mcpServers": []}))["result"]["sessionId"]
        prompt = [{"type": "text", "text": "hi"}]
        done = await agent.request("session/prompt", {"sessionId": sid, "prompt": prompt})
        assert done["result"]["stopReason"] == "end_turn"
        listed = await agent.request("session/list", {"cwd": str(ws)})
        assert [s["sessionId"] for s in listed["result"]["sessions"]] == [sid]

        assert (await agent.request("session/delete", {"sessionId": sid})) == {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {},
        }
        listed = await agent.request("session/list", {"cwd": str(ws)})
        assert listed["result"]["sessions"] == []
        again = await agent.request("session/delete", {"sessionId": sid})
        assert again["error"]["code"] == -32002
        load = await agent.request("session/load", {"sessionId": sid, "cwd": str(ws), "mcpServers": []})
        assert load["error"]["code"] == -32002
        missing = await agent.request("session/delete", {})
        assert missing["error"]["code"] == -32602
        unknown = await agent.request("_kgent/nothing", {})
        assert unknown["error"]["code"] == -32601
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 30)
    assert not list(state.rglob(f"*{sid}*"))  # nothing of it left in the state dir
