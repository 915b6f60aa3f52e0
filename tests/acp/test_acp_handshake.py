"""The stdlib `initialize` of kgent.acp.handshake: the SDK's models accept it, and it takes only what it can read."""

from __future__ import annotations

from typing import Any

import acp
import pytest
from acp import schema as S

from kgent.acp.handshake import PROTOCOL_VERSION, ClientOffer, answer, initialize_result


def test_the_result_is_the_sdks_initialize_response_and_the_protocol_version_is_the_sdks() -> None:
    assert PROTOCOL_VERSION == acp.PROTOCOL_VERSION
    result = initialize_result(PROTOCOL_VERSION)
    assert S.InitializeResponse.model_validate(result) == S.InitializeResponse(
        protocol_version=PROTOCOL_VERSION,
        agent_capabilities=S.AgentCapabilities(
            load_session=True,
            prompt_capabilities=S.PromptCapabilities(embedded_context=True),
            session_capabilities=S.SessionCapabilities(list=S.SessionListCapabilities()),
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
    reply = answer(message, offer)
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
    assert answer(message, offer) is None
    assert offer == ClientOffer(terminal=True)  # untouched
