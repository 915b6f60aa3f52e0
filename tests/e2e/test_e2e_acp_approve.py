"""No blind approvals over ACP: a CodeCompanion-style client (the ACP SDK's client side, fs offered, no terminal)
gets the diff of an edit and the text of a shell command inside `session/request_permission`, before anything runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp import schema as S
from kgent_host import STATE_DIR, daemon_env
from test_e2e_acp import EditorClient

AGENT = [sys.executable, "-m", "kgent", "acp"]
SAMPLE = "value = 1\nprint(value)\n"


async def test_permission_requests_carry_the_diff_and_the_command(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ws = ws.resolve()
    (ws / "sample.py").write_text(SAMPLE)
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                [
                    {
                        "tool": "edit",
                        "args": {"path": "sample.py", "oldText": "value = 1", "newText": "value = 2"},
                    }
                ],
                [{"tool": "bash", "args": {"command": "touch made.txt"}}],
                [{"text": "Done."}],
            ]
        )
    )
    target = str(ws / "sample.py")
    client = EditorClient(["allow_once", "reject_once"], {target: "value = 1  # unsaved\nprint(value)\n"})
    env = daemon_env(STATE_DIR, KGENT_MODEL=str(script), KGENT_PERMISSION_MODE="ask")
    async with spawn_agent_process(client, *AGENT, env=env) as (conn, _):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=S.ClientCapabilities(
                fs=S.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False
            ),
        )
        session = await conn.new_session(cwd=str(ws), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("set value to 2")])
    assert done.stop_reason == "end_turn"
    edit, shell = client.asked
    # the edit's request: the diff, whole file before (the client's unsaved buffer) and after, before it is applied
    [diff] = [c for c in edit.tool_call.content or [] if c.type == "diff"]
    assert diff.path == target
    assert diff.old_text == "value = 1  # unsaved\nprint(value)\n"
    assert diff.new_text == "value = 2  # unsaved\nprint(value)\n"
    assert edit.tool_call.kind == "edit" and edit.tool_call.raw_input["path"] == "sample.py"
    # the shell command's request: its text, as content and in rawInput
    texts: list[Any] = [c.content.text for c in shell.tool_call.content or [] if c.type == "content"]
    assert texts == ["touch made.txt"]
    assert shell.tool_call.raw_input == {"command": "touch made.txt"}
    assert not (ws / "made.txt").exists()  # rejected
    assert client.buffers[target] == "value = 2  # unsaved\nprint(value)\n"
