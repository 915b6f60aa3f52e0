"""Bad input never kills the daemon: broken frames, bad JSON, invalid requests, wrong params, unknown methods each
get the right JSON-RPC error (no traceback, no local path), and stdout stays frames-only."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kgent_host import PATIENCE, STATE_DIR, daemon_env
from raw_daemon import RawDaemon, assert_clean_error, encode, frame


@pytest.fixture(scope="module")
def raw() -> Iterator[RawDaemon]:
    d = RawDaemon(daemon_env(STATE_DIR))
    yield d
    assert d.close() == 0
    assert d.bad_output == []
    assert b"Traceback" not in d.stderr, d.stderr.decode(errors="replace")


def errors_in(messages: list[dict[str, Any]]) -> list[tuple[Any, int, str | None]]:
    out = []
    for m in messages:
        if "error" in m:
            err = assert_clean_error(m)
            out.append((m["id"], err["code"], (err.get("data") or {}).get("code")))
    return out


def test_malformed_json_is_a_parse_error(raw: RawDaemon) -> None:
    raw.send_bytes(frame(b'{"jsonrpc": "2.0", "id": 1, "method": '))
    raw.send_bytes(frame(b"\xff\xfe not utf-8"))
    response, before = raw.request("initialize", {"protocolVersion": 1})
    assert "result" in response
    assert errors_in(before) == [(None, -32700, "parse_error")] * 2


def test_wrong_content_length(raw: RawDaemon) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": "short", "method": "initialize", "params": {"protocolVersion": 1}}
    ).encode()
    raw.send_bytes(b"Content-Length: %d\r\n\r\n" % (len(body) - 5) + body)  # too short: the tail is garbage
    response, before = raw.request("initialize", {"protocolVersion": 1})
    assert "result" in response and errors_in(before) == [(None, -32700, "parse_error")]
    # Too long: it eats the head of the next frame, which is lost too; the daemon resynchronises after it.
    raw.send_bytes(
        b"Content-Length: %d\r\n\r\n" % (len(body) + 12)
        + body
        + encode({"jsonrpc": "2.0", "id": "lost", "method": "initialize"})
    )
    got = raw.resync()
    assert "result" in got[-1]
    assert {(i, c) for i, c, _ in errors_in(got)} == {(None, -32700)}
    raw.send_bytes(b"Content-Type: application/json\r\n\r\n" + body)  # no Content-Length at all
    got = raw.resync()
    assert (None, -32700, "parse_error") in errors_in(got) and "result" in got[-1]


def test_frame_too_large_is_refused_and_skipped(raw: RawDaemon) -> None:
    raw.send_bytes(b"Content-Length: 99999999999\r\n\r\n")
    response, before = raw.request("initialize", {"protocolVersion": 1})
    assert "result" in response and errors_in(before) == [(None, -32600, "frame_too_large")]


def test_header_spelling_is_tolerated(raw: RawDaemon) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": "lower", "method": "initialize", "params": {"protocolVersion": 1}}
    ).encode()
    raw.send_bytes(
        b"content-length:%d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n%s"
        % (len(body), body)
    )
    assert "result" in raw.until("lower")[-1]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ([1, 2, 3], (None, -32600, "invalid_request")),
        ("just a string", (None, -32600, "invalid_request")),
        ({"jsonrpc": "1.0", "id": 5, "method": "initialize"}, (5, -32600, "invalid_request")),
        ({"id": 6, "method": "initialize"}, (6, -32600, "invalid_request")),
        ({"jsonrpc": "2.0", "id": {"x": 1}, "method": "initialize"}, (None, -32600, "invalid_request")),
        ({"jsonrpc": "2.0", "id": True, "method": "initialize"}, (None, -32600, "invalid_request")),
        ({"jsonrpc": "2.0", "id": 7, "method": 42}, (7, -32600, "invalid_request")),
        ({"jsonrpc": "2.0", "id": 8}, (8, -32600, "invalid_request")),
        (
            {"jsonrpc": "2.0", "id": 9, "method": "agent/run", "params": ["positional"]},
            (9, -32602, "invalid_params"),
        ),
        ({"jsonrpc": "2.0", "id": 10, "method": "agent/nope"}, (10, -32601, None)),
        ({"jsonrpc": "2.0", "id": 11, "method": "$/cancelRequest", "params": {"id": 1}}, (11, -32601, None)),
    ],
)
def test_invalid_requests(raw: RawDaemon, message: Any, expected: tuple[Any, int, str | None]) -> None:
    raw.send(message)
    response, before = raw.request("initialize", {"protocolVersion": 1})
    assert "result" in response
    assert errors_in(before) == [expected]


def test_notifications_are_never_answered(raw: RawDaemon) -> None:
    raw.send({"jsonrpc": "2.0", "method": "agent/nope", "params": {}})
    raw.send(
        {"jsonrpc": "2.0", "method": "agent/run", "params": {"prompt": 1}}
    )  # a request sent as a notification
    raw.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "never-sent"}})
    raw.send({"jsonrpc": "2.0", "method": "$/cancelRequest"})
    raw.send({"jsonrpc": "2.0", "id": "who", "result": {"outcome": "selected"}})  # an answer to nothing
    response, before = raw.request("initialize", {"protocolVersion": 1})
    assert "result" in response and before == []


def test_a_request_sent_as_a_notification_is_never_run(tmp_path: Path) -> None:
    """Without an id nobody could learn the runId: such an `agent/run` would be invisible, and in ask mode it would
    wait forever on an approval that is never sent. It is ignored, and so is a `shutdown` without an id. The daemon
    reads frames in order, so a run requested after them and seen to its end would follow any run they started."""
    d = RawDaemon(daemon_env(STATE_DIR))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sample.py").write_text("value = 1\nprint(value)\n")
    d.send(
        {
            "jsonrpc": "2.0",
            "method": "agent/run",
            "params": {"prompt": "Set value to 2", "workspace": str(ws), "model": "tool-loop"},
        }
    )
    d.send({"jsonrpc": "2.0", "method": "shutdown"})
    started, before = d.request("agent/run", {"prompt": "Hi", "workspace": str(ws), "model": "hello"})
    run_id, session_id = started["result"]["runId"], started["result"]["sessionId"]
    seen = d.until_event(run_id, "run_end", into=list(before))
    assert {m["params"]["runId"] for m in seen if m.get("method") == "agent/event"} == {run_id}
    response, _ = d.request("agent/sessions", {"workspace": str(ws)})
    assert [s["sessionId"] for s in response["result"]["sessions"]] == [session_id]
    assert (ws / "sample.py").read_text() == "value = 1\nprint(value)\n"
    assert d.close() == 0 and d.bad_output == []


BAD_PARAMS = [
    ("initialize", {}, "protocolVersion"),
    ("initialize", {"protocolVersion": "1"}, "protocolVersion"),
    ("initialize", {"protocolVersion": 1, "settings": {"mode": "yolo"}}, "settings.mode"),
    ("initialize", {"protocolVersion": 1, "settings": {"approvalTimeout": -1}}, "settings.approvalTimeout"),
    ("initialize", {"protocolVersion": 1, "clientInfo": "me"}, "clientInfo"),
    ("agent/run", {"workspace": "/tmp"}, "prompt"),
    ("agent/run", {"prompt": "", "workspace": "/tmp"}, "prompt"),
    ("agent/run", {"prompt": "hi"}, "workspace"),
    ("agent/run", {"prompt": "hi", "workspace": "relative/dir"}, "workspace"),
    ("agent/run", {"prompt": "hi", "workspace": "/tmp", "mode": 3}, "mode"),
    ("agent/run", {"prompt": "hi", "workspace": "/tmp", "mode": "yolo"}, "mode"),
    ("agent/run", {"prompt": "hi", "workspace": "/tmp", "parentEntryId": "e1"}, "parentEntryId"),
    ("agent/run", {"prompt": [], "workspace": "/tmp"}, "prompt"),
    ("agent/run", {"prompt": [{"type": "text"}], "workspace": "/tmp"}, "prompt[0]"),
    ("agent/cancel", {}, "runId"),
    ("agent/cancel", {"runId": 12}, "runId"),
    ("agent/steer", {"runId": "r"}, "text"),
    ("agent/followUp", {"runId": "r", "text": "   "}, "text"),
    ("agent/clearQueue", {}, "runId"),
    ("agent/sessions", {}, "workspace"),
    ("agent/sessions", {"workspace": "."}, "workspace"),
    ("agent/session", {"sessionId": None}, "sessionId"),
    ("agent/session", {"sessionId": "s", "branchOnly": "yes"}, "branchOnly"),
    ("agent/fork", {"sessionId": "s"}, "entryId"),
    ("agent/compact", {}, "sessionId"),
    ("agent/compact", {"sessionId": "s", "instructions": 5}, "instructions"),
]


@pytest.mark.parametrize(
    ("method", "params", "field"), BAD_PARAMS, ids=[f"{m}-{f}" for m, _, f in BAD_PARAMS]
)
def test_invalid_params_name_the_field(raw: RawDaemon, method: str, params: Any, field: str) -> None:
    response, _ = raw.request(method, params)
    error = assert_clean_error(response)
    assert error["code"] == -32602, error
    assert field in error["message"]
    assert error["data"]["code"] in ("invalid_params", "unknown_permission_mode")


def test_config_errors(raw: RawDaemon, tmp_path: Path) -> None:
    for params, name in [
        ({"prompt": "hi", "workspace": str(tmp_path / "missing")}, "config_error"),
        ({"prompt": "hi", "workspace": str(tmp_path), "provider": "nobody"}, "config_error"),
        ({"prompt": "hi", "workspace": str(tmp_path), "model": "no-such-script"}, "config_error"),
    ]:
        response, _ = raw.request("agent/run", params)
        error = assert_clean_error(response)
        assert (error["code"], error["data"]["code"]) == (-32001, name), error


def test_params_may_be_omitted(tmp_path: Path) -> None:
    """vscode-jsonrpc and Neovim send `shutdown`/`exit` without a params key (pygls pitfall 1)."""
    d = RawDaemon(daemon_env(STATE_DIR))
    d.send_bytes(frame(b'{"jsonrpc":"2.0","id":1,"method":"shutdown"}'))
    assert d.until(1)[-1] == {"jsonrpc": "2.0", "id": 1, "result": None}
    d.send_bytes(frame(b'{"jsonrpc":"2.0","method":"exit"}'))
    assert d.proc.wait(PATIENCE) == 0 and d.bad_output == []


def test_stdout_carries_frames_only(tmp_path: Path) -> None:
    """A tool writing to the daemon's own fd 1 lands on stderr, not in the frame stream; so does a child's stdout."""
    d = RawDaemon(daemon_env(STATE_DIR))
    response, _ = d.request("initialize", {"protocolVersion": 1})
    script = tmp_path / "pollute.json"
    command = f"echo GARBAGE-ON-DAEMON-STDOUT > /proc/{d.proc.pid}/fd/1; echo done"
    script.write_text(json.dumps([[{"tool": "bash", "args": {"command": command}}], [{"text": "ok"}]]))
    ws = tmp_path / "ws"
    ws.mkdir()
    response, _ = d.request(
        "agent/run", {"prompt": "go", "workspace": str(ws), "model": str(script), "mode": "full"}
    )
    run_id = response["result"]["runId"]
    while True:
        message = d.messages.get(timeout=PATIENCE)
        if message.get("method") == "agent/event" and message["params"]["event"]["type"] == "run_end":
            assert message["params"]["runId"] == run_id and message["params"]["event"]["status"] == "settled"
            break
    assert d.close() == 0
    assert d.bad_output == []
    assert b"GARBAGE-ON-DAEMON-STDOUT" in d.stderr


def test_kgent_serve_stdio_is_the_daemon(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("kgent")
    assert script.is_file(), "make setup installs the kgent console script next to the venv's python"
    d = RawDaemon(daemon_env(STATE_DIR), command=[str(script), "serve", "--stdio"])
    response, _ = d.request("initialize", {"protocolVersion": 1})
    assert response["result"]["serverInfo"]["name"] == "kgent"
    response, _ = d.request("agent/run", {"prompt": "hi", "workspace": str(tmp_path)})
    assert set(response["result"]) == {"runId", "sessionId"}
    assert d.close() == 0 and d.bad_output == []


def test_unicode_round_trips(raw: RawDaemon, tmp_path: Path) -> None:
    text = "héllo ✓ 🚀 \u2028 naïve"
    raw.send_bytes(
        encode(
            {
                "jsonrpc": "2.0",
                "id": "u1",
                "method": "agent/run",
                "params": {"prompt": text, "workspace": str(tmp_path)},
            }
        )
    )
    run_id = raw.until("u1")[-1]["result"]["runId"]
    while True:
        message = raw.messages.get(timeout=PATIENCE)
        event = message.get("params", {}).get("event", {})
        if event.get("type") == "run_start" and message["params"]["runId"] == run_id:
            assert event["prompt"] == text
            break


def test_a_bad_first_initialize_is_answered_by_the_full_server() -> None:
    """The boot path answers only a well-formed initialize; anything else waits for the full server."""
    d = RawDaemon(daemon_env(STATE_DIR))
    d.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "one"}})
    error = assert_clean_error(d.until(1)[-1])
    assert error["code"] == -32602 and "protocolVersion" in error["message"]
    response, _ = d.request("initialize", {"protocolVersion": 2})
    assert response["result"]["protocolVersion"] == 1
    assert d.close() == 0 and d.bad_output == []
