"""Request params at the edge: prompt content blocks become one text; wrong shapes are ParamsErrors that name the
field and say what was expected; `initialize`'s stdlib validator (the boot path) agrees with its model."""

from __future__ import annotations

from typing import Any

import pytest

from kgent.service import wire as W
from kgent.service.handshake import ParamsError, Settings, parse_initialize
from kgent.service.wire.requests import prompt_text


def test_prompt_blocks_become_text() -> None:
    blocks = [
        {"type": "text", "text": "Look:"},
        {"type": "resource_link", "uri": "file:///a/b.py", "name": "b.py", "mimeType": "text/x-python"},
        {"type": "resource", "resource": {"uri": "file:///a/c.txt", "text": "hello"}},
    ]
    p = W.RunParams.parse({"prompt": blocks, "workspace": "/w"})
    assert p.text == 'Look:\n\n[b.py](file:///a/b.py)\n\n<resource uri="file:///a/c.txt">\nhello\n</resource>'
    assert prompt_text("plain") == "plain"


@pytest.mark.parametrize(
    "prompt",
    [
        None,
        "",
        "   ",
        [],
        [{"type": "image", "data": "", "mimeType": "image/png"}],
        [{"type": "text"}],
        ["text"],
        [{"type": "resource", "resource": {"uri": "u", "blob": "AAAA"}}],
        42,
        {"type": "text", "text": "x"},
        [{"type": "text", "text": " \n"}],
    ],
)
def test_bad_prompts(prompt: object) -> None:
    with pytest.raises(ParamsError):
        W.RunParams.parse({"prompt": prompt, "workspace": "/w"})


def test_run_params() -> None:
    p = W.RunParams.parse({"prompt": "x", "workspace": "/w", "mode": "ALLOW-ALL", "extra": 1})
    assert (p.workspace, p.mode, p.session_id) == ("/w", "full", None)
    resumed = W.RunParams.parse({"prompt": "x", "sessionId": "s1", "parentEntryId": "e1"})
    assert resumed.workspace is None and resumed.parent_entry_id == "e1"
    for bad in (
        {"prompt": "x"},
        {"prompt": "x", "workspace": "w"},
        {"prompt": "x", "workspace": "/w", "mode": "yolo"},
        {"prompt": "x", "workspace": "/w\x00"},
        {"prompt": "x", "workspace": "/w", "parentEntryId": "e"},
        {"prompt": "x", "workspace": "/w", "session_id": "s", "parentEntryId": "e"},
    ):
        with pytest.raises(ParamsError):
            W.RunParams.parse(bad)
    with pytest.raises(ParamsError) as mode:
        W.RunParams.parse({"prompt": "x", "workspace": "/w", "mode": "yolo"})
    assert mode.value.code == "unknown_permission_mode"


@pytest.mark.parametrize("bad", [0, -1, "1", True, float("nan"), float("inf"), [1]])
def test_cost_limit_is_a_positive_number(bad: object) -> None:
    assert W.RunParams.parse({"prompt": "x", "workspace": "/w", "costLimit": 2}).cost_limit == 2.0
    assert W.RunParams.parse({"prompt": "x", "workspace": "/w"}).cost_limit is None
    with pytest.raises(ParamsError, match="'costLimit' must be a positive number"):
        W.RunParams.parse({"prompt": "x", "workspace": "/w", "costLimit": bad})


@pytest.mark.parametrize("bad", [0, -1, "5", True, 2.5, [1]])
def test_max_turns_is_a_positive_integer(bad: object) -> None:
    assert W.RunParams.parse({"prompt": "x", "workspace": "/w", "maxTurns": 300}).max_turns == 300
    assert W.RunParams.parse({"prompt": "x", "workspace": "/w"}).max_turns is None
    with pytest.raises(ParamsError, match="'maxTurns'"):
        W.RunParams.parse({"prompt": "x", "workspace": "/w", "maxTurns": bad})


def test_omitted_params_are_empty_and_positional_params_refused() -> None:
    assert W.SessionParams.parse({"sessionId": "s"}).branch_only is False
    assert W.SessionParams.parse({"sessionId": "s", "branchOnly": None}).branch_only is None
    with pytest.raises(ParamsError, match="'sessionId' is required"):
        W.SessionParams.parse(None)
    with pytest.raises(ParamsError, match="params must be an object"):
        W.SessionParams.parse([1, 2])


# Today's wording, pinned: the field's path, then what was expected.
MESSAGES: list[tuple[type[W.Params], Any, str, str]] = [
    (W.RunParams, {"workspace": "/w"}, "'prompt' is required", "invalid_params"),
    (
        W.RunParams,
        {"prompt": 42, "workspace": "/w"},
        "'prompt' must be a string or a non-empty array of content blocks",
        "invalid_params",
    ),
    (W.RunParams, {"prompt": "  ", "workspace": "/w"}, "'prompt' must not be blank", "invalid_params"),
    (W.RunParams, {"prompt": [], "workspace": "/w"}, "'prompt' must not be empty", "invalid_params"),
    (
        W.RunParams,
        {"prompt": [{"type": "text", "text": ""}], "workspace": "/w"},
        "'prompt' must not be empty",
        "invalid_params",
    ),
    (
        W.RunParams,
        {"prompt": ["text"], "workspace": "/w"},
        "'prompt[0]' must be a content block object",
        "invalid_params",
    ),
    (
        W.RunParams,
        {"prompt": [{"text": "x"}], "workspace": "/w"},
        "'prompt[0]' needs a 'type' (one of text, resource_link, resource, image)",
        "invalid_params",
    ),
    (
        W.RunParams,
        {"prompt": [{"type": "text", "text": "x"}, {"type": "audio"}], "workspace": "/w"},
        "'prompt[1]' has an unsupported content type 'audio' (supported: text, resource_link, resource, image)",
        "invalid_params",
    ),
    (
        W.RunParams,
        {"prompt": [{"type": "text"}], "workspace": "/w"},
        "'prompt[0].text' is required",
        "invalid_params",
    ),
    (
        W.RunParams,
        {"prompt": [{"type": "text", "text": 5}], "workspace": "/w"},
        "'prompt[0].text' must be a string",
        "invalid_params",
    ),
    (
        W.RunParams,
        {"prompt": [{"type": "resource_link", "uri": "u"}], "workspace": "/w"},
        "'prompt[0].name' is required",
        "invalid_params",
    ),
    (
        W.RunParams,
        {"prompt": [{"type": "resource", "resource": "u"}], "workspace": "/w"},
        "'prompt[0].resource' must be an object",
        "invalid_params",
    ),
    (
        W.RunParams,
        {"prompt": [{"type": "resource", "resource": {"uri": "u", "blob": "AA"}}], "workspace": "/w"},
        "'prompt[0].resource' must be a text resource ('blob' is not supported)",
        "invalid_params",
    ),
    (
        W.RunParams,
        {"prompt": [{"type": "resource", "resource": {"text": "t"}}], "workspace": "/w"},
        "'prompt[0].resource.uri' is required",
        "invalid_params",
    ),
    (W.RunParams, {"prompt": "x"}, "'workspace' is required (unless sessionId is given)", "invalid_params"),
    (
        W.RunParams,
        {"prompt": "x", "workspace": "rel"},
        "'workspace' must be an absolute path",
        "invalid_params",
    ),
    (
        W.RunParams,
        {"prompt": "x", "workspace": ""},
        "'workspace' must be a non-empty string",
        "invalid_params",
    ),
    (W.RunParams, {"prompt": "x", "workspace": "/w", "mode": 3}, "'mode' must be a string", "invalid_params"),
    (
        W.RunParams,
        {"prompt": "x", "workspace": "/w", "mode": "yolo"},
        "'mode' must be one of plan, ask, auto, full, risk_based (got 'yolo')",
        "unknown_permission_mode",
    ),
    (
        W.RunParams,
        {"prompt": "x", "workspace": "/w", "parentEntryId": "e1"},
        "'parentEntryId' needs a 'sessionId'",
        "invalid_params",
    ),
    (
        W.RunParams,
        {"prompt": "x", "sessionId": ""},
        "'sessionId' must be a non-empty string",
        "invalid_params",
    ),
    (W.RunIdParams, {}, "'runId' is required", "invalid_params"),
    (W.RunIdParams, {"runId": 12}, "'runId' must be a string", "invalid_params"),
    (W.RunTextParams, {"runId": "r"}, "'text' is required", "invalid_params"),
    (W.RunTextParams, {"runId": "r", "text": "   "}, "'text' must not be blank", "invalid_params"),
    (W.SessionsParams, {"workspace": "."}, "'workspace' must be an absolute path", "invalid_params"),
    (W.SessionParams, {"sessionId": None}, "'sessionId' must be a string", "invalid_params"),
    (
        W.SessionParams,
        {"sessionId": "s", "branchOnly": "yes"},
        "'branchOnly' must be a boolean",
        "invalid_params",
    ),
    (W.ForkParams, {"sessionId": "s"}, "'entryId' is required", "invalid_params"),
    (
        W.CompactParams,
        {"sessionId": "s", "instructions": 5},
        "'instructions' must be a string",
        "invalid_params",
    ),
    (
        W.CompactParams,
        {"sessionId": "s", "provider": ""},
        "'provider' must be a non-empty string",
        "invalid_params",
    ),
    (W.InitializeParams, {"protocolVersion": "1"}, "'protocolVersion' must be an integer", "invalid_params"),
    (
        W.InitializeParams,
        {"protocolVersion": 1, "settings": {"approvalTimeout": 0}},
        "'settings.approvalTimeout' must be greater than 0",
        "invalid_params",
    ),
]


@pytest.mark.parametrize(("model", "params", "message", "code"), MESSAGES, ids=[m[2] for m in MESSAGES])
def test_error_messages_name_the_field(model: type[W.Params], params: Any, message: str, code: str) -> None:
    with pytest.raises(ParamsError) as raised:
        model.parse(params)
    assert str(raised.value) == f"invalid params: {message}"
    assert raised.value.code == code


def test_snake_case_keys_are_not_the_wire() -> None:
    with pytest.raises(ParamsError, match="'runId' is required"):
        W.RunIdParams.parse({"run_id": "r"})


INITIALIZE = [
    {"protocolVersion": 1},
    {"protocolVersion": 7, "clientInfo": {"name": "x", "version": 5}, "capabilities": {"a": 1}},
    {"protocolVersion": 1, "clientInfo": None, "capabilities": None, "settings": None},
    {"protocolVersion": 1, "clientInfo": {}},
    {
        "protocolVersion": 1,
        "settings": {
            "provider": "scripted",
            "model": " m ",
            "baseUrl": None,
            "apiKey": "k",
            "mode": "Risk-Based",
            "approvalTimeout": 2,
        },
    },
    {"protocolVersion": 1, "settings": {"approvalTimeout": None, "mode": None}},
    {"protocolVersion": 1, "settings": {"approvalTimeout": 0.5}, "unknown": True},
    {},
    {"protocolVersion": 0},
    {"protocolVersion": True},
    {"protocolVersion": "1"},
    {"protocolVersion": 1.0},
    {"protocolVersion": 1, "clientInfo": "me"},
    {"protocolVersion": 1, "clientInfo": {"name": 5}},
    {"protocolVersion": 1, "clientInfo": {"name": None}},
    {"protocolVersion": 1, "capabilities": []},
    {"protocolVersion": 1, "settings": []},
    {"protocolVersion": 1, "settings": {"provider": ""}},
    {"protocolVersion": 1, "settings": {"model": "  "}},
    {"protocolVersion": 1, "settings": {"baseUrl": 5}},
    {"protocolVersion": 1, "settings": {"mode": "yolo"}},
    {"protocolVersion": 1, "settings": {"mode": 3}},
    {"protocolVersion": 1, "settings": {"mode": ""}},
    {"protocolVersion": 1, "settings": {"approvalTimeout": "1"}},
    {"protocolVersion": 1, "settings": {"approvalTimeout": True}},
    {"protocolVersion": 1, "settings": {"approvalTimeout": -1}},
    {"protocolVersion": 1, "settings": {"approvalTimeout": 0}},
    {"protocolVersion": 1, "settings": {"approvalTimeout": 1e9}},
    {"protocolVersion": 1, "settings": {"maxTurns": 300}},
    {"protocolVersion": 1, "settings": {"maxTurns": None}},
    {"protocolVersion": 1, "settings": {"maxTurns": 0}},
    {"protocolVersion": 1, "settings": {"maxTurns": 2.0}},
    {"protocolVersion": 1, "settings": {"maxTurns": "3"}},
    {"protocolVersion": 1, "settings": {"maxTurns": True}},
]


def _accepted(validate: Any, params: Any) -> bool:
    try:
        validate(params)
    except ParamsError:
        return False
    return True


@pytest.mark.parametrize("params", INITIALIZE)
def test_initialize_model_agrees_with_the_boot_path(params: dict[str, Any]) -> None:
    """`initialize` is validated by stdlib code (it is answered before pydantic is imported); the model describes it
    for the schema. Both accept exactly the same params."""
    boot = _accepted(lambda p: parse_initialize(p, Settings()), params)
    assert _accepted(W.InitializeParams.parse, params) == boot
