"""protocol.md is the contract: its method and event indexes must match what the daemon registers, sends and
forwards, its event fields must match the kernel's events, and its JSON examples must parse and validate."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from kgent_host import KgentHost
from pygls.exceptions import JsonRpcException

from helpers import conforms
from kgent.core import events as kernel_events
from kgent.daemon.server import NOTIFICATIONS, REQUESTS, SENT, build_server
from kgent.service import handshake
from kgent.service.wire import Params
from kgent.service.wire.schema import METHODS

DOC = (Path(__file__).resolve().parents[2] / "protocol.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = DOC.index(f"\n## {title}\n")
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end != -1 else None]


def table_rows(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows.append(cells)
    return rows[1:]  # without the header row


def method_index() -> list[tuple[str, str, str]]:
    return [(c[0].strip("`"), c[1], c[2]) for c in table_rows(section("Method index"))]


def event_table() -> dict[str, list[str]]:
    text = section("Events")
    table = text[: text.index("\n### ")]
    return {c[0].strip("`"): [f.strip(" `") for f in c[1].split(",")] for c in table_rows(table)}


def json_blocks() -> list[Any]:
    return [json.loads(b) for b in re.findall(r"```json\n(.*?)```", DOC, re.S)]


def test_method_index_matches_the_handler_table() -> None:
    index = method_index()
    client = {m for m, d, _ in index if d in ("client → daemon", "both")}
    sent = {m for m, d, _ in index if d in ("daemon → client", "both")}
    requests = {m for m, d, k in index if d == "client → daemon" and k == "request"}
    notifications = {m for m, d, k in index if d in ("client → daemon", "both") and k == "notification"}
    assert requests == set(REQUESTS)
    assert notifications == set(NOTIFICATIONS)
    assert client == set(REQUESTS) | set(NOTIFICATIONS)
    assert sent == set(SENT)
    # What the daemon really serves: a handler per request (`exit` and `$/cancelRequest` are kgent.daemon.rpc's own).
    conn, _ = build_server({}, handshake.Settings(), lambda: None)
    assert set(conn.handlers) == set(REQUESTS)
    # Every method has its own section, and the schema's method list is the index.
    for method, _, _ in index:
        assert f"### `{method}`" in DOC, method
    assert [(m.name, m.direction, m.kind) for m in METHODS] == index


def test_event_index_matches_the_kernel() -> None:
    table = event_table()
    assert list(table) == list(kernel_events.EVENT_TYPES) == list(handshake.EVENT_TYPES)
    classes = {cls.type: cls for cls in kernel_events.Event.__args__}  # type: ignore[attr-defined]
    for type_, fields in table.items():
        wire = set(kernel_events.wire_keys(classes[type_]))
        assert {f.rstrip("?") for f in fields} == wire, type_
        assert f"### `{type_}`" in DOC, type_


def test_json_examples_parse_and_validate() -> None:
    """Every example is a valid message: params and results (paired with their request by id) fit the wire models,
    exactly (what a client sends through the daemon's own validation)."""
    methods = {m.name: m for m in METHODS}
    asked: dict[Any, Any] = {}
    blocks = json_blocks()
    assert len(blocks) >= 25
    seen = set()
    for message in blocks:
        assert message["jsonrpc"] == "2.0"
        method = message.get("method")
        if method is not None:
            m = methods[method]
            if m.params is None:
                assert message.get("params") is None, message
            elif issubclass(m.params, Params):
                m.params.parse(message.get("params"))
            else:
                conforms(m.params, message["params"])
            if method == "initialize":
                handshake.parse_initialize(message["params"], handshake.Settings())
            if "id" in message:
                asked[message["id"]] = m
            seen.add(method)
        elif "result" in message:
            m = asked.pop(message["id"])
            conforms(m.result, message["result"])
            seen.add(f"{m.name} → result")
        if "error" in message:
            assert message["error"]["code"] in {
                -32700,
                -32600,
                -32601,
                -32602,
                -32603,
                -32800,
                -32001,
                -32002,
                -32003,
                -32004,
                -32005,
            }
    requests = {m.name for m in METHODS if m.kind == "request" and m.direction == "client → daemon"}
    assert seen >= set(methods) | {f"{name} → result" for name in requests | {"agent/permission"}}


def test_documented_error_codes_are_the_daemons() -> None:
    from kgent.daemon import errors

    documented = {int(c[0].strip("`")) for c in table_rows(section("Errors").split("```")[0])}
    defined = {v for k, v in vars(errors).items() if k.isupper() and isinstance(v, int)}
    assert documented == defined


async def test_the_live_daemon_agrees(host: KgentHost) -> None:
    init = await host.initialize()
    caps = init["capabilities"]
    assert init["protocolVersion"] == handshake.PROTOCOL_VERSION == 1
    assert caps["events"] == list(event_table())
    for method in REQUESTS:
        if method == "shutdown":
            continue
        try:
            await host.call(method, {})
        except JsonRpcException as e:
            assert e.code != -32601, method
    with pytest.raises(JsonRpcException) as unknown:
        await host.call("agent/undocumented", {})
    assert unknown.value.code == -32601
