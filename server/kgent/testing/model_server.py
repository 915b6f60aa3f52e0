"""A real local model server for tests and benchmarks: HTTP/1.1 with keep-alive on 127.0.0.1, streaming the
Chat Completions (`…/chat/completions`, kgent.testing.render_openai) and Anthropic Messages (`…/messages`,
kgent.testing.render_anthropic) wire formats from scripts, and injecting faults (kgent.testing.faults) on demand.
Stdlib only; it runs its own event loop in a thread, or in the foreground via `python -m kgent.testing`.

Scripts use ScriptedProvider's step vocabulary (a list of turns, each a list of steps): `{"thinking": s}`,
`{"text": s, "chunks": n?}`, `{"tool": name, "args": {...}, "id"?: s, "raw_args"?: "verbatim JSON text"}`,
`{"sleep": seconds}`, `{"error": message, "type"?: s}`, `{"usage": {"input": n, "output": n}}`. The turn
played is the number of assistant messages since the last user text in the request; past the end, the last
turn repeats. Usage reports the vendor's prompt-cache reads and writes as kgent.testing.cache emulates them.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from kgent.providers.scripted import Script, load_script
from kgent.testing.cache import PromptCache
from kgent.testing.faults import Fault
from kgent.testing.render_anthropic import ANTHROPIC
from kgent.testing.render_openai import OPENAI
from kgent.testing.wire import REASONS, Vendor

__all__ = ["VENDORS", "Fault", "ModelServer", "RecordedRequest"]

VENDORS: dict[str, Vendor] = {"openai": OPENAI, "anthropic": ANTHROPIC}


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    raw: bytes = field(repr=False)
    received: float = field(default_factory=time.time)  # wall clock (benchmarks: time to the first request)

    @property
    def body(self) -> Any:
        return json.loads(self.raw) if self.raw else None


_CONTEXT = ("<instructions>", "<skills>")  # context messages (kgent.context): not a new prompt of the user's


def _turn_index(wire: str, messages: list[dict[str, Any]]) -> int:
    index = 0
    for m in reversed(messages):
        if m.get("role") == "assistant":
            index += 1
        elif m.get("role") == "user":
            content = m.get("content")
            texts = (
                [content]
                if isinstance(content, str)
                else [str(b.get("text", "")) for b in content if b.get("type") != "tool_result"]
            )
            if texts and all(t.startswith(_CONTEXT) for t in texts):
                continue  # instructions found by a tool call (after its results): the same turn goes on
            if wire == "openai" or texts:
                break
    return index


class ModelServer:
    """Start with `start()` (or `with ModelServer(...) as server`); point providers at `openai_base_url` or
    `anthropic_base_url`. `requests` records every model request; `connections` counts accepted connections,
    `disconnects` clients that went away mid-response. Control endpoints, for a server in another process:
    `POST /_kgent/script`, `POST /_kgent/fault`, `GET /_kgent/requests` (`…/requests/received`: only when each
    arrived), `POST /_kgent/reset`."""

    def __init__(
        self, script: Script | str = "hello", *, model: str = "test-model", cache: bool = True
    ) -> None:
        self.script = script
        self.model = model
        # The vendors' prompt-cache accounting (kgent.testing.cache); None: usage reports no cache use.
        self.cache = PromptCache() if cache else None
        self.faults: list[Fault] = []
        self.requests: list[RecordedRequest] = []
        self.disconnects = 0
        self.connections = 0
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def script(self) -> Script:
        """The turns played; assign a list of turns, a built-in script name or a path to a JSON script."""
        return self._script

    @script.setter
    def script(self, script: Script | str) -> None:
        self._script = load_script(script) if isinstance(script, str) else script

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def base_url(self, wire: str) -> str:
        return self.openai_base_url if wire == "openai" else self.anthropic_base_url

    def fail(self, *faults: Fault) -> None:
        """Queue faults for the next model requests."""
        self.faults.extend(faults)

    def reset(self) -> None:
        if self.cache is not None:
            self.cache.clear()
        self.faults.clear()
        self.requests.clear()
        self.disconnects = 0
        self.connections = 0

    # -- lifecycle -------------------------------------------------------------------------------------------
    async def serve(self, port: int = 0) -> asyncio.Server:
        """Listen on the running loop (foreground use); returns the asyncio server."""
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self._server

    def start(self) -> ModelServer:
        """Serve from a background thread with its own event loop; returns once listening."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(self.serve())
            except BaseException as exc:  # surface bind errors to the caller
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name="kgent-model-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._thread = None

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- HTTP ------------------------------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection must close."""
        line = await reader.readline()
        if not line.strip():
            return False
        method, path, _ = line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while (h := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = h.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        keep = headers.get("connection", "").lower() != "close"
        if path.startswith("/_kgent/"):
            self._respond(writer, 200, self._control(method, path, raw))
            return keep
        wire = (
            "openai"
            if path.endswith("/chat/completions")
            else "anthropic"
            if path.endswith("/messages")
            else ""
        )
        if method != "POST" or not wire:
            self._respond(
                writer, 404, {"error": {"message": f"no route for {method} {path}", "type": "not_found"}}
            )
            return keep
        self.requests.append(RecordedRequest(method=method, path=path, headers=headers, raw=raw))
        fault = self._next_fault()
        return await self._model(wire, raw, fault, reader, writer) and keep

    def _next_fault(self) -> Fault | None:
        if not self.faults:
            return None
        fault = self.faults[0]
        fault.times -= 1
        if fault.times <= 0:
            self.faults.pop(0)
        return fault

    def _control(self, method: str, path: str, raw: bytes) -> Any:
        if path == "/_kgent/script" and method == "POST":
            data = json.loads(raw)
            self.script = data["turns"] if isinstance(data, dict) else data
        elif path == "/_kgent/fault" and method == "POST":
            self.fail(Fault(**json.loads(raw)))
        elif path == "/_kgent/reset" and method == "POST":
            self.reset()
        elif path == "/_kgent/requests/received":  # without the bodies (a long run's are megabytes)
            return {"received": [r.received for r in self.requests]}
        elif path == "/_kgent/requests":
            return {
                "requests": [
                    {
                        "method": r.method,
                        "path": r.path,
                        "headers": r.headers,
                        "body": r.raw.decode(),
                        "received": r.received,
                    }
                    for r in self.requests
                ],
                "disconnects": self.disconnects,
            }
        return {"ok": True}

    def _respond(
        self, writer: asyncio.StreamWriter, status: int, body: Any, extra: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(body).encode()
        head = [
            f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}",
            "content-type: application/json",
            f"content-length: {len(data)}",
            *(f"{k}: {v}" for k, v in (extra or {}).items()),
        ]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)

    async def _wait_or_disconnect(self, reader: asyncio.StreamReader, seconds: float) -> bool:
        """Sleep, noticing a client that goes away meanwhile (True)."""
        try:
            data = await asyncio.wait_for(reader.read(1), seconds)
        except TimeoutError:
            return False
        if not data:
            self.disconnects += 1
            return True
        return False

    async def _model(
        self,
        wire: str,
        raw: bytes,
        fault: Fault | None,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        kind = fault.kind if fault else ""
        if kind == "drop":
            return False
        if kind == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if kind == "stall" and fault is not None and await self._wait_or_disconnect(reader, fault.seconds):
            return False
        if fault is not None and kind in ("status", "context"):
            self._respond(
                writer,
                fault.status,
                fault.error_body(VENDORS[wire]),
                {"retry-after": fault.retry_after} if fault.retry_after is not None else None,
            )
            await writer.drain()
            return True
        body = json.loads(raw)
        messages = body.get("messages") or []
        turn = self.script[min(_turn_index(wire, messages), len(self.script) - 1)]
        vendor = VENDORS[wire]
        cache = self.cache.account(wire, body, len(raw) // 4) if self.cache is not None else None
        items = vendor.render(turn, body.get("model") or self.model, len(messages), len(raw) // 4, cache)
        if fault is not None:
            items = fault.inject(vendor, items)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        batch: list[bytes] = []
        for item in items:
            if isinstance(item, bytes):
                batch.append(b"%x\r\n%b\r\n" % (len(item), item))
                continue
            if item < 0:  # the cut: flush what was sent, then abort mid-body
                writer.write(b"".join(batch))
                await writer.drain()
                writer.transport.abort()
                return False
            writer.write(b"".join(batch))
            batch = []
            await writer.drain()
            if await self._wait_or_disconnect(reader, item):
                return False
        batch.append(b"0\r\n\r\n")
        writer.write(b"".join(batch))
        await writer.drain()
        return True
