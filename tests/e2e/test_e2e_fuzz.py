"""Hypothesis fuzzing of frames, messages and params against one live daemon: every reply is a documented JSON-RPC
error or a result, nothing but frames reaches stdout, and the daemon answers afterwards.

Examples per test: KGENT_FUZZ_EXAMPLES (default 800; three tests, so ≥ 2 000 cases per run).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kgent_host import STATE_DIR, daemon_env
from raw_daemon import RawDaemon, assert_clean_error, frame

from helpers import json_values

EXAMPLES = int(os.environ.get("KGENT_FUZZ_EXAMPLES", "800"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
# Everything but `exit` and `shutdown`, which end the service by design.
METHODS = [
    "initialize",
    "agent/run",
    "agent/cancel",
    "agent/steer",
    "agent/followUp",
    "agent/clearQueue",
    "agent/sessions",
    "agent/session",
    "agent/fork",
    "agent/compact",
    "$/cancelRequest",
    "agent/event",
    "agent/permission",
]
WORKSPACE = tempfile.mkdtemp(prefix="kgent-fuzz-ws-")

strings = st.text(max_size=30).filter(lambda s: s not in ("exit", "shutdown"))


@pytest.fixture(scope="module")
def raw() -> Iterator[RawDaemon]:
    d = RawDaemon(daemon_env(STATE_DIR))
    d.request("initialize", {"protocolVersion": 1})
    yield d
    code = d.close()
    shutil.rmtree(WORKSPACE, ignore_errors=True)
    assert code == 0
    assert d.bad_output == []
    assert b"Traceback" not in d.stderr, d.stderr.decode(errors="replace")[-3000:]


def check(messages: list[dict[str, Any]]) -> None:
    """Everything the daemon sent: well-formed, and every error a documented one (never an internal error)."""
    for m in messages:
        assert m.get("jsonrpc") == "2.0"
        if "error" in m:
            assert_clean_error(m)
        elif "method" not in m:
            assert "result" in m and "id" in m


# -- frames: garbage, wrong lengths, odd headers, valid frames, in any mix ----------------------------------------------
header_lines = st.sampled_from(
    [
        b"Content-Length: %d\r\n",
        b"content-length:%d\r\n",
        b"Content-Length:  %d \r\n",
        b"Content-Length: %d\n",
        b"Content-Length: -%d\r\n",
        b"Content-Length: %dx\r\n",
        b"X-Other: %d\r\n",
    ]
)
raw_frames = st.builds(
    lambda line, n, extra, body: line % n + extra + b"\r\n" + body,
    header_lines,
    st.integers(0, 4096),
    st.sampled_from([b"", b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n", b"\r\n"]),
    st.binary(max_size=200),
)
valid_frames = json_values.map(lambda v: frame(json.dumps(v).encode()))
frame_pieces = st.lists(st.one_of(st.binary(max_size=80), raw_frames, valid_frames), min_size=1, max_size=4)


@FUZZ
@given(pieces=frame_pieces)
def test_fuzz_frames(raw: RawDaemon, pieces: list[bytes]) -> None:
    raw.send_bytes(b"".join(pieces))
    got = raw.resync()
    check(got)
    assert "result" in got[-1]


# -- messages: well-framed JSON objects with any mix of JSON-RPC members ---------------------------------------------------
ids = st.one_of(
    st.integers(-(2**31), 2**31),
    strings.filter(lambda s: not s.startswith("probe")),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False),
    st.lists(st.integers(), max_size=2),
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2]),
        "id": ids,
        "method": st.one_of(st.sampled_from(METHODS), strings, st.integers()),
        "params": json_values,
        "result": json_values,
        "error": json_values,
    },
)


@FUZZ
@given(message=messages)
def test_fuzz_messages(raw: RawDaemon, message: dict[str, Any]) -> None:
    raw.send_bytes(frame(json.dumps(message).encode()))
    got = raw.resync()
    check(got)
    assert "result" in got[-1]


# -- params: each method with its own keys holding values of any type, plus strangers ------------------------------------
KEYS = {
    "initialize": ["protocolVersion", "clientInfo", "capabilities", "settings"],
    "agent/run": ["prompt", "workspace", "sessionId", "parentEntryId", "mode", "provider", "model"],
    "agent/cancel": ["runId"],
    "agent/steer": ["runId", "text"],
    "agent/followUp": ["runId", "text"],
    "agent/clearQueue": ["runId"],
    "agent/sessions": ["workspace"],
    "agent/session": ["sessionId", "branchOnly"],
    "agent/fork": ["sessionId", "entryId"],
    "agent/compact": ["sessionId", "instructions", "provider", "model"],
}
field_values = st.one_of(
    json_values,
    st.just(WORKSPACE),
    st.sampled_from(["ask", "plan", "full", "hello", "scripted", "run-000000000000", "text"]),
    st.lists(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["text", "image", "resource", "resource_link"])},
            optional={"text": json_values, "uri": json_values, "name": json_values, "resource": json_values},
        ),
        max_size=3,
    ),
    st.fixed_dictionaries(
        {},
        optional={
            "provider": json_values,
            "model": json_values,
            "mode": json_values,
            "approvalTimeout": json_values,
            "baseUrl": json_values,
        },
    ),
)


@st.composite
def method_params(draw: st.DrawFn) -> tuple[str, Any]:
    method = draw(st.sampled_from(sorted(KEYS)))
    keys = draw(st.lists(st.sampled_from(KEYS[method]), unique=True))
    params = {k: draw(field_values) for k in keys}
    params.update(draw(st.dictionaries(st.text(max_size=8), json_values, max_size=2)))
    return method, draw(st.one_of(st.just(params), st.just(params), json_values))


@FUZZ
@given(call=method_params())
def test_fuzz_params(raw: RawDaemon, call: tuple[str, Any]) -> None:
    method, params = call
    if method == "initialize" and isinstance(params, dict) and isinstance(params.get("settings"), dict):
        params["settings"].pop("provider", None)  # keep the connection on the scripted provider
    msg_id = raw.next_id()
    raw.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    got = raw.until(msg_id)
    check(got)
    answer = got[-1]
    assert ("result" in answer) != ("error" in answer)
