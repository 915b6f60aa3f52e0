"""Hypothesis fuzzing of lines, messages and params against one live `kgent acp`: every reply is a JSON-RPC error
with a known code or a result, nothing but JSON lines reaches stdout, and the agent answers afterwards.

Examples per test: KGENT_FUZZ_EXAMPLES (default 800) divided by 4 (an ACP process is slower to drive).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kgent_host import STATE_DIR, daemon_env

from helpers import json_values

EXAMPLES = max(25, int(os.environ.get("KGENT_FUZZ_EXAMPLES", "800")) // 4)
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
METHODS = [
    "initialize",
    "authenticate",
    "session/new",
    "session/load",
    "session/set_mode",
    "session/prompt",
    "session/cancel",
    "session/list",
    "session/set_config_option",
    "$/cancel_request",
    "fs/read_text_file",
]
# parse error, invalid request, method not found, invalid params, internal error, auth required, not found
CODES = {-32700, -32600, -32601, -32602, -32603, -32000, -32002}
WORKSPACE = tempfile.mkdtemp(prefix="kgent-acp-fuzz-ws-")


class RawAgent:
    """`kgent acp` on raw pipes: lines in, parsed lines out (a reader thread), stderr kept."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kgent", "acp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=daemon_env(STATE_DIR),
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr = bytearray()
        self.next_id = 10**9
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for chunk in self.proc.stderr:
            self.stderr += chunk

    def write(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def ping(self) -> list[dict[str, Any]]:
        """Send `initialize` and collect every message up to its answer (all of them well-formed JSON-RPC)."""
        self.next_id += 1
        self.write(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": self.next_id,
                    "method": "initialize",
                    "params": {"protocolVersion": 1},
                }
            ).encode()
        )
        seen: list[dict[str, Any]] = []
        while True:
            message = json.loads(self.lines.get(timeout=60))
            assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", message
            seen.append(message)
            if message.get("id") == self.next_id and "result" in message:
                return seen

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(30)


@pytest.fixture(scope="module")
def agent() -> Iterator[RawAgent]:
    a = RawAgent()
    a.ping()
    yield a
    assert a.close() == 0
    assert b"/kgent/" not in a.stderr, a.stderr.decode(errors="replace")[
        -3000:
    ]  # no traceback through our code


def check(messages: list[dict[str, Any]]) -> None:
    for m in messages:
        if "error" in m:
            assert m["error"]["code"] in CODES, m
            assert "Traceback" not in json.dumps(m)


@FUZZ
@given(st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" ")))
def test_arbitrary_lines(agent: RawAgent, line: bytes) -> None:
    agent.write(line)
    check(agent.ping())


@FUZZ
@given(json_values)
def test_arbitrary_json(agent: RawAgent, value: Any) -> None:
    agent.write(json.dumps(value).encode())
    check(agent.ping())


@FUZZ
@given(
    st.sampled_from(METHODS) | st.text(max_size=20),
    st.none() | st.integers(0, 10**6) | st.text(max_size=10),
    st.dictionaries(
        st.sampled_from(
            [
                "sessionId",
                "cwd",
                "prompt",
                "modeId",
                "protocolVersion",
                "methodId",
                "mcpServers",
                "clientCapabilities",
                "requestId",
            ]
        ),
        json_values | st.just(WORKSPACE) | st.just([{"type": "text", "text": "hi"}]),
        max_size=4,
    )
    | json_values,
)
def test_arbitrary_requests(agent: RawAgent, method: str, msg_id: Any, params: Any) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        message["id"] = msg_id
    agent.write(json.dumps(message).encode())
    check(agent.ping())
