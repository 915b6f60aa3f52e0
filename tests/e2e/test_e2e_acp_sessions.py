"""`kgent acp`'s usage and its sessions beyond new/load/list, driven by the ACP Python SDK's client against a real
local model server (Anthropic's wire format, a priced model): `usage_update` after each model call (the context used
of the model's window, the session's cost so far), the prompt's `usage`, and ACP's unstable `session/fork`,
`session/resume` and `session/close`."""

from __future__ import annotations

import base64
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp import schema as S
from kgent_host import daemon_env

from kgent.context.tokens import context_window
from kgent.testing.images import png
from kgent.testing.model_server import ModelServer

AGENT = [sys.executable, "-m", "kgent", "acp"]
MODEL = "claude-sonnet-4-5"  # priced in the built-in table: the updates carry a cost
IMAGE = base64.b64encode(png(3, 2, (200, 10, 30))).decode()


class Client:
    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []

    async def request_permission(self, **kwargs: Any) -> S.RequestPermissionResponse:
        return S.RequestPermissionResponse(outcome=S.DeniedOutcome(outcome="cancelled"))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    def of(self, session_id: str, kind: type) -> list[Any]:
        return [u for sid, u in self.updates if sid == session_id and isinstance(u, kind)]


@pytest.fixture(scope="module")
def model_server() -> Iterator[ModelServer]:
    script = [[{"text": "First answer."}], [{"text": "Second answer, a little longer than the first."}]]
    with ModelServer(script) as server:
        yield server


@pytest.fixture
def env(model_server: ModelServer) -> dict[str, str]:
    return daemon_env(
        tempfile.mkdtemp(prefix="kgent-acp-sessions-"),
        KGENT_PROVIDER="anthropic",
        KGENT_BASE_URL=model_server.anthropic_base_url,
        KGENT_MODEL=MODEL,
        KGENT_API_KEY="test-key",
    )


def _said(client: Client, session_id: str) -> list[str]:
    return [
        u.content.text if isinstance(u.content, S.TextContentBlock) else type(u.content).__name__
        for u in client.of(session_id, S.UserMessageChunk)
    ]


async def test_usage_update_after_each_call_and_the_prompts_usage(
    tmp_path: Path, env: dict[str, str]
) -> None:
    client = Client()
    async with spawn_agent_process(client, *AGENT, env=env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        first = await conn.prompt(session_id=sid, prompt=[text_block("one")])
        after_first = client.of(sid, S.UsageUpdate)
        second = await conn.prompt(session_id=sid, prompt=[text_block("two")])
        after_second = client.of(sid, S.UsageUpdate)
    assert len(after_first) == 1 and len(after_second) == 2  # one model call per prompt, one update each
    for done, update in ((first, after_first[-1]), (second, after_second[-1])):
        usage = done.usage
        assert usage is not None and usage.input_tokens > 0 and usage.output_tokens > 0
        assert usage.total_tokens == usage.input_tokens + usage.output_tokens
        assert update.used == usage.total_tokens  # the call's whole prompt and its answer
        assert update.size == context_window("anthropic", MODEL) == 200_000
        assert update.cost is not None and update.cost.currency == "USD"
    one, two = after_first[-1], after_second[-1]
    assert two.used > one.used  # the second call carried the first exchange too
    assert 0 < one.cost.amount < two.cost.amount  # the session's cost so far: it only grows

    # Reopened in a new process: the last call's figures at once, the cost from the stored turns.
    reopened = Client()
    async with spawn_agent_process(reopened, *AGENT, env=env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
    loaded = reopened.of(sid, S.UsageUpdate)
    assert len(loaded) == 1
    assert (loaded[0].used, loaded[0].size) == (two.used, two.size)
    # Live, the cost is what the session had cost (rounded to 6 places) plus this prompt's (rounded); reopened, the sum
    # of the stored turns rounded once: two roundings against one differ by at most 1.5e-6 (CI saw 0.009512/0.009513).
    assert loaded[0].cost is not None and loaded[0].cost.amount == pytest.approx(two.cost.amount, abs=1.5e-6)


async def test_fork_resume_and_close(tmp_path: Path, env: dict[str, str]) -> None:
    client = Client()
    async with spawn_agent_process(client, *AGENT, env=env) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        caps = init.agent_capabilities
        assert caps is not None and caps.session_capabilities is not None
        sessions = caps.session_capabilities
        assert sessions.fork is not None and sessions.resume is not None and sessions.close is not None
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.set_config_option(config_id="mode", session_id=sid, value="plan")
        image = S.ImageContentBlock(type="image", data=IMAGE, mime_type="image/png")
        await conn.prompt(session_id=sid, prompt=[text_block("look"), image])

        forked = await conn.fork_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        fid = forked.session_id
        assert fid != sid
        assert forked.modes is not None and forked.modes.current_mode_id == "plan"  # the original's mode
        await conn.prompt(session_id=fid, prompt=[text_block("only in the fork")])

        listed = await conn.list_sessions(cwd=str(tmp_path))
        assert {s.session_id for s in listed.sessions} >= {sid, fid}
        assert {s.title for s in listed.sessions if s.session_id in (sid, fid)} == {"look"}

        with pytest.raises(RequestError) as unknown:
            await conn.fork_session(session_id="no-such-session", cwd=str(tmp_path), mcp_servers=[])
        assert unknown.value.code == -32002

        before = len(client.updates)
        resumed = await conn.resume_session(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        assert resumed.modes is not None
        assert not [u for _, u in client.updates[before:] if isinstance(u, S.UserMessageChunk)]  # no replay
        assert [type(u) for _, u in client.updates[before:] if isinstance(u, S.UsageUpdate)] == [
            S.UsageUpdate
        ]

        await conn.close_session(session_id=fid)
        with pytest.raises(RequestError) as gone:
            await conn.close_session(session_id="no-such-session")
        assert gone.value.code == -32002

    # A new process: the fork has the original's conversation (its image too) and its own prompt; the original
    # does not have the fork's prompt.
    reopened = Client()
    async with spawn_agent_process(reopened, *AGENT, env=env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(tmp_path), session_id=fid, mcp_servers=[])
        await conn.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
    assert _said(reopened, fid) == ["look", "ImageContentBlock", "only in the fork"]
    assert _said(reopened, sid) == ["look", "ImageContentBlock"]
    images = [
        u.content for u in reopened.of(fid, S.UserMessageChunk) if isinstance(u.content, S.ImageContentBlock)
    ]
    assert images[0].data == IMAGE  # its bytes were copied with it
