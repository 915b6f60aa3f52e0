"""A minimal Chrome DevTools Protocol client over a stdlib WebSocket, for web views playwright cannot attach to (Qt
WebEngine refuses playwright's browser-context calls): one page target, `call(method, params)` → result, events
skipped. Test support only."""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx


class Cdp:
    def __init__(self, ws_url: str, timeout: float) -> None:
        u = urlparse(ws_url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {u.path} HTTP/1.1\r\nHost: {u.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        assert head.startswith(b"HTTP/1.1 101"), head
        self.next_id = 0

    @classmethod
    def page(cls, devtools_port: int, timeout: float) -> Cdp:
        """The first page target of the DevTools endpoint on `devtools_port`."""
        targets = httpx.get(f"http://127.0.0.1:{devtools_port}/json", timeout=timeout).json()
        page = next(t for t in targets if t["type"] == "page")
        return cls(page["webSocketDebuggerUrl"], timeout)

    def _send(self, text: str) -> None:
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x81]) + (
            bytes([0x80 | n])
            if n < 126
            else bytes([0x80 | 126]) + struct.pack(">H", n)
            if n < 1 << 16
            else bytes([0x80 | 127]) + struct.pack(">Q", n)
        )
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            assert chunk, "the DevTools connection closed"
            buf += chunk
        return buf

    def _receive(self) -> str:
        message = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            message += self._exact(n)
            if b0 & 0x80:  # the final frame
                return message.decode()

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        self._send(json.dumps({"id": self.next_id, "method": method, "params": params or {}}))
        while True:
            reply = json.loads(self._receive())
            if reply.get("id") == self.next_id:
                assert "error" not in reply, reply
                result: dict[str, Any] = reply["result"]
                return result

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float) -> Any:
        """Poll `expression` until it is truthy (a deadline and a condition, never a sleep-then-check)."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.call(
                "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
            )
            # an expression that throws (the page still loading: an element not there yet) is not true yet
            value = None if "exceptionDetails" in result else result["result"].get("value")
            if value:
                return value
            assert time.monotonic() < deadline, f"timed out waiting for {expression}: {result}"
            time.sleep(0.05)

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"]))

    def close(self) -> None:
        self.sock.close()
