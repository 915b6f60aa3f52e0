"""The permission choices each ACP client we have shows, and what each then does (docs/acp.md § What a person sees,
per client). The plugins themselves are not installable here (no registry reachable has CodeCompanion, avante or
agent-shell), so `kgent acp` is driven by the official SDK's client sending the messages each one sends, read from
their sources: CodeCompanion's `initialize` (`clientInfo` "CodeCompanion.nvim", fs) and its Accept / Always accept /
Reject / Cancel keys (by kind); agent-shell's (`clientInfo` "agent-shell", fs, terminal) and its reject, which it
follows with `session/cancel`; avante's (no `clientInfo`: KGENT_ACP_CLIENT=avante in its agent config) and its
buttons sorted by name, the first the default, and its `always_yes`: once "allow_always" is chosen it answers every
later request of the connection "allow_always" itself."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp import schema as S
from kgent_host import STATE_DIR, daemon_env
from test_e2e_acp import AGENT, EditorClient, wait_for

from kgent.acp.options import AGENT_SHELL_REJECT, AVANTE_ALWAYS

FS = S.FileSystemCapabilities(read_text_file=True, write_text_file=True)
CODECOMPANION = S.Implementation(name="CodeCompanion.nvim", version="1.0.0")
AGENT_SHELL = S.Implementation(name="agent-shell", title="Emacs Agent Shell", version="0.50.1")


def _script(tmp_path: Path, *after: list[dict[str, Any]]) -> str:
    """A script that runs `touch made.txt` (asked in ask mode), then plays `after` (default: one answer)."""
    turns = [[{"tool": "bash", "args": {"command": "touch made.txt"}}], *(after or ([{"text": "Made it."}],))]
    path = tmp_path / "script.json"
    path.write_text(json.dumps(turns))
    return str(path)


def _env(tmp_path: Path, script: str, **extra: str) -> dict[str, str]:
    return daemon_env(STATE_DIR, KGENT_MODEL=script, KGENT_PERMISSION_MODE="ask", **extra)


def _shown(request: S.RequestPermissionRequest) -> list[tuple[str, str, str]]:
    return [(o.option_id, o.kind, o.name) for o in request.options]


class Avante(EditorClient):
    """avante.nvim's answers: its buttons are the options sorted by name (the first focused: <CR> presses it); the
    person presses `pressed`; after an "allow_always" avante answers every later request that way, unasked."""

    def __init__(self, pressed: list[str]) -> None:
        super().__init__(pressed, {})
        self.always_yes = False
        self.buttons: list[list[str]] = []

    async def request_permission(
        self, options: list[S.PermissionOption], session_id: str, tool_call: S.ToolCallUpdate, **kwargs: Any
    ) -> S.RequestPermissionResponse:
        self.asked.append(
            S.RequestPermissionRequest(session_id=session_id, tool_call=tool_call, options=options)
        )
        by_kind = {o.kind: o.option_id for o in options}
        if self.always_yes:
            return S.RequestPermissionResponse(
                outcome=S.AllowedOutcome(outcome="selected", option_id=by_kind["allow_always"])
            )
        self.buttons.append(sorted(o.name for o in options))
        pressed = self.answers.pop(0)
        self.always_yes = pressed == "allow_always"
        # avante sends its own three: a press of anything but allow once / allow always is a reject once
        sent = pressed if pressed in ("allow_once", "allow_always") else by_kind["reject_once"]
        return S.RequestPermissionResponse(outcome=S.AllowedOutcome(outcome="selected", option_id=sent))


async def test_avante_offers_its_three_buttons_and_its_always_makes_no_rule(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    client = Avante(["allow_always"])
    env = _env(tmp_path, _script(tmp_path), KGENT_ACP_CLIENT="avante")
    async with spawn_agent_process(client, *AGENT, env=env) as (conn, _):
        # avante's initialize: no clientInfo
        await conn.initialize(protocol_version=1, client_capabilities=S.ClientCapabilities(fs=FS))
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        first = await conn.prompt(session_id=session.session_id, prompt=[text_block("Make a file")])
        (workspace / "made.txt").unlink()
        again = await conn.prompt(session_id=session.session_id, prompt=[text_block("Make it again")])
    assert first.stop_reason == again.stop_reason == "end_turn"
    assert (workspace / "made.txt").exists()
    # no "Always reject" (avante sends it as a plain reject), and "allow_always" named for what avante does with it
    assert _shown(client.asked[0]) == [
        ("allow_once", "allow_once", "Allow once"),
        ("allow_always", "allow_always", AVANTE_ALWAYS),
        ("reject_once", "reject_once", "Reject"),
    ]
    assert client.asked[0].options[1].field_meta is None  # no rule of Kgent's to describe
    # sorted by name, as avante shows them: the first (the default) is "Allow once"
    assert client.buttons == [["Allow once", AVANTE_ALWAYS, "Reject"]]
    # the same call in the same session is asked again (Kgent made no rule) and avante answered it itself
    assert len(client.asked) == 2 and len(client.buttons) == 1


async def test_codecompanion_keys_by_kind_always_accept_makes_the_session_rule_cancel_cancels(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    client = EditorClient(["allow_always", "cancelled"], {})
    env = _env(tmp_path, _script(tmp_path))
    async with spawn_agent_process(client, *AGENT, env=env) as (conn, _):
        await conn.initialize(
            protocol_version=1, client_capabilities=S.ClientCapabilities(fs=FS), client_info=CODECOMPANION
        )
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        first = await conn.prompt(session_id=session.session_id, prompt=[text_block("Make a file")])
        again = await conn.prompt(session_id=session.session_id, prompt=[text_block("Make it again")])
        other = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        cancelled = await conn.prompt(session_id=other.session_id, prompt=[text_block("Make a file")])
    # CodeCompanion's keys: Accept, Always accept, Reject (by kind) and its own Cancel; no key for reject_always
    assert [o.kind for o in client.asked[0].options] == ["allow_once", "allow_always", "reject_once"]
    assert client.asked[0].options[1].field_meta == {
        "kgent": {
            "scope": "session",
            "rules": [{"rule": "bash(touch *)", "text": "allow `touch` with any arguments this session"}],
        }
    }
    # "Always accept": this session's rule, so the same call is not asked again in it; another session is asked
    assert first.stop_reason == again.stop_reason == "end_turn"
    assert len(client.asked) == 2 and client.asked[1].session_id == other.session_id
    # "Cancel" (outcome cancelled): the call is refused and the turn ends cancelled
    assert cancelled.stop_reason == "cancelled"


async def test_agent_shell_reject_says_it_stops_the_turn(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    client = EditorClient([], {})
    script = _script(tmp_path, [{"sleep": 120}, {"text": "Carried on."}])
    async with spawn_agent_process(client, *AGENT, env=_env(tmp_path, script)) as (conn, _):
        caps = S.ClientCapabilities(fs=FS, terminal=True)
        await conn.initialize(protocol_version=1, client_capabilities=caps, client_info=AGENT_SHELL)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[text_block("Make a file")])
        )
        await wait_for(lambda: client.waiting is not None)
        # agent-shell's buttons: allow (y), always allow (!), reject (its interrupt key); none for reject_always
        assert [(o.kind, o.name) for o in client.asked[0].options] == [
            ("allow_once", "Allow once"),
            ("allow_always", "Always allow `touch …` this session"),
            ("reject_once", AGENT_SHELL_REJECT),
        ]
        # its reject: the answer, then session/cancel (agent-shell-interrupt)
        assert client.waiting is not None
        client.waiting.set_result("reject_once")
        await conn.cancel(session_id=session.session_id)
        done = await turn
    assert done.stop_reason == "cancelled"
    assert not (workspace / "made.txt").exists()


async def test_other_clients_keep_the_four_options(tmp_path: Path) -> None:
    """Zed and the SDK clients (any other name, or none): the four, the always ones named for their rules."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    client = EditorClient(["reject_once"], {})
    async with spawn_agent_process(client, *AGENT, env=_env(tmp_path, _script(tmp_path))) as (conn, _):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_info=S.Implementation(name="zed", version="1")
        )
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("Make a file")])
    assert done.stop_reason == "end_turn"
    assert [o.name for o in client.asked[0].options] == [
        "Allow once",
        "Always allow `touch …` this session",
        "Reject",
        "Always reject `touch …` this session",
    ]
