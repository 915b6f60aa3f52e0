"""The stdlib `initialize`, `authenticate` and `session/new` of kgent.acp.handshake: the SDK's models accept them,
they take only what they can read, and they are answered before the SDK has loaded."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import acp
import pytest
from acp import schema as S

from kgent.acp.agent import KgentAgent, _Session
from kgent.acp.guard import pump
from kgent.acp.handshake import (
    PROTOCOL_VERSION,
    ClientOffer,
    EarlySessions,
    answer,
    initialize_result,
    new_session,
)
from kgent.service.store import open_store


def test_the_result_is_the_sdks_initialize_response_and_the_protocol_version_is_the_sdks() -> None:
    assert PROTOCOL_VERSION == acp.PROTOCOL_VERSION
    result = initialize_result(PROTOCOL_VERSION)
    assert S.InitializeResponse.model_validate(result) == S.InitializeResponse(
        protocol_version=PROTOCOL_VERSION,
        agent_capabilities=S.AgentCapabilities(
            load_session=True,
            prompt_capabilities=S.PromptCapabilities(embedded_context=True, image=True),
            session_capabilities=S.SessionCapabilities(
                list=S.SessionListCapabilities(),
                fork=S.SessionForkCapabilities(),
                resume=S.SessionResumeCapabilities(),
                close=S.SessionCloseCapabilities(),
                delete=S.SessionDeleteCapabilities(),
            ),
            mcp_capabilities=S.McpCapabilities(http=True, sse=False),
        ),
        agent_info=S.Implementation(name="kgent", title="Kgent", version="0.1.0"),
        auth_methods=[S.EnvVarAuthMethod.model_validate(result["authMethods"][0])],
    )
    assert result["authMethods"][0]["id"] == "api-key" and result["authMethods"][0]["type"] == "env_var"
    assert initialize_result(7)["protocolVersion"] == PROTOCOL_VERSION


def test_a_well_formed_initialize_is_answered_and_notes_what_the_client_offers() -> None:
    offer = ClientOffer()
    caps = {"fs": {"readTextFile": True, "writeTextFile": False}, "terminal": True}
    message = {
        "jsonrpc": "2.0",
        "id": "a",
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": caps},
    }
    reply = answer(message, offer, {})
    assert reply is not None and reply["id"] == "a" and reply["result"] == initialize_result(1)
    assert offer == ClientOffer(fs_read=True, fs_write=False, terminal=True)
    # the wire form the SDK would have parsed means the same
    parsed = S.ClientCapabilities.model_validate(caps)
    again = ClientOffer()
    again.take(parsed.model_dump(by_alias=True))
    assert again == offer


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}},
        {"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": 1}},  # a notification
        {"jsonrpc": "2.0", "id": True, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1"}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": -1}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": [1]},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {"terminal": "yes"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {"fs": 3}},
        },
        {"id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
    ],
)
def test_anything_else_is_left_to_the_sdk(message: dict[str, Any]) -> None:
    offer = ClientOffer(terminal=True)
    assert answer(message, offer, {}) is None
    assert offer == ClientOffer(terminal=True)  # untouched


class Out:
    """The stdout side of `pump`: what it writes."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.lines += [json.loads(line) for line in data.splitlines()]


async def test_authenticate_is_answered_before_the_sdk_reads_a_line() -> None:
    """`authenticate` right after `initialize` must not wait for the SDK to load (issue 29): both are answered
    while nothing reads the SDK's side."""
    source, sdk_side, out = asyncio.StreamReader(), asyncio.StreamReader(), Out()
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "authenticate", "params": {"methodId": "api-key"}},
        {"jsonrpc": "2.0", "id": 3, "method": "authenticate", "params": {"methodId": "api-key"}},
    ]
    for message in messages:
        source.feed_data(json.dumps(message).encode() + b"\n")
    source.feed_eof()
    envs = iter([{"KGENT_PROVIDER": "scripted"}, {"KGENT_PROVIDER": "openai"}])
    offer = ClientOffer()

    async def intercept(message: dict[str, Any]) -> dict[str, Any] | None:
        env = next(envs) if message["method"] == "authenticate" else {}
        return answer(message, offer, env)

    await pump(source, sdk_side, out, intercept)  # type: ignore[arg-type]
    by_id = {m["id"]: m for m in out.lines}
    assert by_id[1]["result"]["protocolVersion"] == 1
    assert by_id[2] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    missing = by_id[3]["error"]
    assert missing["code"] == -32000 and "no API key for provider 'openai'" in missing["message"]
    assert await sdk_side.read() == b""  # nothing went to the SDK


def test_an_unknown_auth_method_goes_to_the_sdk() -> None:
    message = {"jsonrpc": "2.0", "id": 4, "method": "authenticate", "params": {"methodId": "oauth"}}
    assert answer(message, ClientOffer(), {}) is None


def _new(mid: int, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "method": "session/new", "params": params}


@pytest.fixture
def state(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A state dir of the test's own (the session store reads KGENT_STATE_DIR from the process's environment)."""
    monkeypatch.setenv("KGENT_STATE_DIR", str(tmp_path / "state"))
    return {"KGENT_PROVIDER": "scripted", "KGENT_MODEL": "hello", "KGENT_PERMISSION_MODE": "auto"}


@pytest.mark.parametrize("model", [None, "tool-loop"])
async def test_the_early_session_answer_is_what_the_agent_answers(
    state: dict[str, str], tmp_path: Any, model: str | None
) -> None:
    """The stdlib answer validates into the SDK's NewSessionResponse and equals the one KgentAgent builds for the
    same session (kgent.acp.setup is their one source)."""
    env = {**state, **({"KGENT_MODEL": model} if model else {})}
    early = EarlySessions()
    reply = await new_session(_new(7, cwd=str(tmp_path), mcpServers=[]), env, early)
    assert reply is not None and reply["id"] == 7
    response = S.NewSessionResponse.model_validate(reply["result"])
    agent = KgentAgent(env)
    session = _Session(str(tmp_path), "auto")
    assert response == S.NewSessionResponse(
        session_id=response.session_id,
        modes=agent._modes("auto"),
        config_options=agent._config_options(session),
    )
    assert early.pending == [(response.session_id, str(tmp_path))]
    store, _ = open_store()
    assert (await store.load(response.session_id)).info.workspace == str(tmp_path)  # made, durably


@pytest.mark.parametrize(
    "params",
    [
        {"cwd": "relative/dir", "mcpServers": []},
        {
            "cwd": "/tmp",
            "mcpServers": [{"name": "x", "command": "x", "args": [], "env": []}],
        },  # the agent checks them
        {"cwd": "/tmp"},
        {
            "cwd": "/tmp",
            "mcpServers": [],
            "additionalDirectories": ["/srv"],
        },  # a param the early answer would drop
        {"cwd": 3, "mcpServers": []},
    ],
)
async def test_a_session_new_it_cannot_answer_whole_goes_to_the_agent(
    state: dict[str, str], params: dict[str, Any]
) -> None:
    early = EarlySessions()
    assert await new_session(_new(1, **params), state, early) is None
    assert early.pending == []


async def test_session_new_is_answered_before_the_sdk_reads_a_line_and_then_left_to_the_agent(
    state: dict[str, str], tmp_path: Any
) -> None:
    """Before the agent is there, `session/new` is answered by the pump and the session noted for it; the agent
    adopts what was noted when it connects, and from then on `session/new` goes to the SDK."""
    source, sdk_side, out = asyncio.StreamReader(), asyncio.StreamReader(), Out()
    early = EarlySessions()

    async def intercept(message: dict[str, Any]) -> dict[str, Any] | None:
        return answer(message, ClientOffer(), state) or await new_session(message, state, early)

    source.feed_data(json.dumps(_new(1, cwd=str(tmp_path), mcpServers=[])).encode() + b"\n")
    pumping = asyncio.get_running_loop().create_task(pump(source, sdk_side, out, intercept))  # type: ignore[arg-type]
    await _until(lambda: out.lines)
    [reply] = out.lines
    made = reply["result"]["sessionId"]
    adopted: list[tuple[str, str]] = []
    early.attach(lambda session_id, workspace: adopted.append((session_id, workspace)))
    assert adopted == [(made, str(tmp_path))] and early.pending == []
    later = _new(2, cwd=str(tmp_path), mcpServers=[])
    source.feed_data(json.dumps(later).encode() + b"\n")
    source.feed_eof()
    await pumping
    assert len(out.lines) == 1  # not answered here: the SDK's
    assert json.loads(await sdk_side.read()) == later


async def _until(predicate: Any) -> None:
    """Polls `predicate` (what the pump wrote, which nothing signals) until it holds, for at most 30 s."""
    for _ in range(3000):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out waiting")
