"""A byte-level client for tests that must send what no JSON-RPC library would (broken frames, bad JSON).

It reads the daemon's stdout with a strict parser of its own: anything on stdout that is not a well-formed
`Content-Length` frame of a JSON object fails the test (`bad_output`).
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import re
import subprocess
import threading
import time
from typing import Any

from kgent_host import DAEMON, PATIENCE

_HEADER = re.compile(rb"Content-Length: (\d+)\r\n\r\n")


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def encode(message: Any) -> bytes:
    return frame(json.dumps(message).encode())


class RawDaemon:
    def __init__(self, env: dict[str, str], command: list[str] | None = None) -> None:
        self.proc = subprocess.Popen(
            command or DAEMON, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.bad_output: list[bytes] = []
        self.stderr = bytearray()
        self._ids = itertools.count(1)
        self._given_up: set[str] = set()  # probes resync stopped waiting for: their late answers are dropped
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        fd, buf = self.proc.stdout.fileno(), b""
        while True:
            data = os.read(fd, 1 << 16)
            if not data:
                return
            buf += data
            while buf:
                m = _HEADER.match(buf)
                if m is None:
                    if len(buf) >= 40 or not b"Content-Length: ".startswith(buf[:16]):
                        self.bad_output.append(buf)
                        buf = b""
                    break
                end = m.end() + int(m.group(1))
                if len(buf) < end:
                    break
                try:
                    message = json.loads(buf[m.end() : end])
                    assert isinstance(message, dict)
                    self.messages.put(message)
                except (ValueError, AssertionError):
                    self.bad_output.append(buf[:end])
                buf = buf[end:]

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        while data := self.proc.stderr.read1(1 << 16):  # type: ignore[attr-defined]
            self.stderr += data

    # -- sending ------------------------------------------------------------------------------------------------------
    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_bytes(encode(message))

    def next_id(self) -> str:
        return f"probe-{next(self._ids)}"

    # -- receiving ----------------------------------------------------------------------------------------------------
    def until(
        self, msg_id: Any, timeout: float = PATIENCE, into: list[dict[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        """Every message received up to and including the response to `msg_id` (appended to `into` as they come);
        TimeoutError if it never comes."""
        got: list[dict[str, Any]] = [] if into is None else into
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no response to {msg_id!r}; received {got[-5:]}")
            message = self._next(remaining)
            if message is None:
                continue
            got.append(message)
            if message.get("id") == msg_id and "method" not in message:
                return got

    def until_event(
        self,
        run_id: str,
        event_type: str,
        timeout: float = PATIENCE,
        into: list[dict[str, Any]] | None = None,
    ) -> list[dict[str, Any]]:
        """Every message received up to and including the run's first `event_type` event (appended to `into`, which
        is also searched first); TimeoutError if it never comes."""
        got: list[dict[str, Any]] = [] if into is None else into

        def hit(m: dict[str, Any]) -> bool:
            params = m.get("params") or {}
            return (
                m.get("method") == "agent/event"
                and params.get("runId") == run_id
                and params.get("event", {}).get("type") == event_type
            )

        if any(hit(m) for m in got):
            return got
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {event_type} for {run_id!r}; received {got[-5:]}")
            message = self._next(remaining)
            if message is None:
                continue
            got.append(message)
            if hit(message):
                return got

    def _next(self, timeout: float) -> dict[str, Any] | None:
        """The next message within `timeout` (None if none came), skipping late answers to abandoned probes."""
        try:
            message = self.messages.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        if message.get("id") in self._given_up and "method" not in message:
            self._given_up.discard(message["id"])
            return None
        return message

    def request(
        self, method: str, params: Any = None, timeout: float = PATIENCE
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(the response, what came before it)."""
        msg_id = self.next_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        got = self.until(msg_id, timeout)
        return got[-1], got[:-1]

    def resync(self, within: float = PATIENCE) -> list[dict[str, Any]]:
        """After arbitrary bytes: pad out any half-read frame, then probe until the daemon answers. Returns every
        message received meanwhile (a probe's answer last).

        Should the garbage swallow a probe, another follows after 5 s, then 10 s; an answer to any of them will do,
        and the others' late answers are dropped (a slow daemon answers a probe late, not never)."""
        got: list[dict[str, Any]] = []
        probes: set[str] = set()
        deadline = next_probe = time.monotonic()
        deadline += within
        while True:
            now = time.monotonic()
            if now >= deadline:
                raise TimeoutError(f"the daemon answered none of {len(probes)} probes in {within} s")
            if now >= next_probe:
                msg_id = self.next_id()
                probes.add(msg_id)
                self.send_bytes(b"\r\n\r\n" + b" " * 8192 + b"\r\n\r\n")
                self.send(
                    {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": {"protocolVersion": 1}}
                )
                next_probe = now + 5.0 * len(probes)
            message = self._next(min(next_probe, deadline) - now)
            if message is None:
                continue
            got.append(message)
            if message.get("id") in probes and "method" not in message:
                self._given_up |= probes - {message["id"]}
                return got

    def close(self, timeout: float = PATIENCE) -> int:
        try:
            self.send({"jsonrpc": "2.0", "method": "exit"})
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise


ALLOWED_CODES = {-32700, -32600, -32601, -32602, -32800, -32001, -32002, -32003, -32004, -32005}
_INSTALL_DIRS = tuple(
    {os.path.dirname(os.path.dirname(os.path.abspath(json.__file__))), os.path.dirname(DAEMON[0])}
)


def assert_clean_error(message: dict[str, Any]) -> dict[str, Any]:
    """An error response as protocol.md promises it: a documented code, `data` (if any) an object with a string
    `code` and nothing else of note, no traceback, no path of the daemon's machine."""
    import kgent

    error = message["error"]
    assert set(message) == {"jsonrpc", "id", "error"} and message["jsonrpc"] == "2.0"
    assert error["code"] in ALLOWED_CODES, error
    assert isinstance(error["message"], str) and error["message"]
    data = error.get("data")
    if data is not None:
        assert isinstance(data, dict) and isinstance(data["code"], str), error
        assert set(data) <= {"code", "runId", "incident"}, error
    text = json.dumps(error)
    assert "Traceback" not in text and "traceback" not in text and 'File \\"' not in text
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(kgent.__file__)))
    for secret in (package_root, *_INSTALL_DIRS):
        assert secret not in text, f"{secret} leaked in {error}"
    return error
