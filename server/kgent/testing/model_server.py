"""A real local model server for tests and benchmarks: HTTP/1.1 with keep-alive on 127.0.0.1, streaming the
Chat Completions (`…/chat/completions`) and Anthropic Messages (`…/messages`) wire formats from scripts, and
injecting faults on demand. Stdlib only; it runs its own event loop in a thread, or in the foreground via
`python -m kgent.testing`.

Scripts use ScriptedProvider's step vocabulary (a list of turns, each a list of steps): `{"thinking": s}`,
`{"text": s, "chunks": n?}`, `{"tool": name, "args": {...}, "id"?: s, "raw_args"?: "verbatim JSON text"}`,
`{"sleep": seconds}`, `{"error": message, "type"?: s}`, `{"usage": {"input": n, "output": n}}`. The turn
played is the number of assistant messages since the last user text in the request; past the end, the last
turn repeats.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import Any

from kgent.providers.scripted import Script, _chunks, load_script

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}
_CONTEXT_MESSAGE = {
    "openai": (
        "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens. "
        "Please reduce the length of the messages.",
        "invalid_request_error",
        "context_length_exceeded",
    ),
    "anthropic": ("prompt is too long: 210000 tokens > 200000 maximum", "invalid_request_error", None),
}


@dataclass(slots=True, kw_only=True)
class Fault:
    """One injected failure, applied to the next `times` model requests (in the order faults were queued)."""

    kind: str
    status: int = 0
    message: str = ""
    error_type: str = ""
    retry_after: str | None = None
    seconds: float = 0.0
    after_events: int = 0
    times: int = 1

    @classmethod
    def http_status(
        cls,
        status: int,
        *,
        retry_after: str | float | None = None,
        message: str = "",
        error_type: str = "",
        times: int = 1,
    ) -> Fault:
        """An HTTP error response in the vendor's JSON error format (optionally with Retry-After)."""
        ra = None if retry_after is None else str(retry_after)
        return cls(
            kind="status", status=status, retry_after=ra, message=message, error_type=error_type, times=times
        )

    @classmethod
    def context_too_long(cls, times: int = 1) -> Fault:
        """The vendor's 400 for a prompt that does not fit the context window."""
        return cls(kind="context", status=400, times=times)

    @classmethod
    def drop(cls, times: int = 1) -> Fault:
        """Close the connection after reading the request, before any response byte."""
        return cls(kind="drop", times=times)

    @classmethod
    def reset(cls, times: int = 1) -> Fault:
        """Reset the connection (RST) after reading the request."""
        return cls(kind="reset", times=times)

    @classmethod
    def stall(cls, seconds: float, times: int = 1) -> Fault:
        """Wait `seconds` before the response headers (a read timeout before the first byte)."""
        return cls(kind="stall", seconds=seconds, times=times)

    @classmethod
    def cut(cls, after_events: int, times: int = 1) -> Fault:
        """Send `after_events` events, then abort the connection mid-body."""
        return cls(kind="cut", after_events=after_events, times=times)

    @classmethod
    def malformed(cls, after_events: int = 0, times: int = 1) -> Fault:
        """Insert a line that is not an SSE field after `after_events` events."""
        return cls(kind="malformed", after_events=after_events, times=times)

    @classmethod
    def bad_json(cls, after_events: int = 0, times: int = 1) -> Fault:
        """Insert an SSE data line that is not valid JSON after `after_events` events."""
        return cls(kind="bad_json", after_events=after_events, times=times)

    @classmethod
    def no_done(cls, times: int = 1) -> Fault:
        """End the body cleanly but without the end marker (`[DONE]` / `message_stop`)."""
        return cls(kind="no_done", times=times)

    @classmethod
    def stream_error(
        cls,
        error_type: str = "overloaded_error",
        message: str = "Overloaded",
        *,
        after_events: int = 0,
        times: int = 1,
    ) -> Fault:
        """An error event inside a 200 stream after `after_events` events, ending the stream."""
        return cls(
            kind="stream_error",
            error_type=error_type,
            message=message,
            after_events=after_events,
            times=times,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    raw: bytes = field(repr=False)

    @property
    def body(self) -> Any:
        return json.loads(self.raw) if self.raw else None


def _turn_index(wire: str, messages: list[dict[str, Any]]) -> int:
    index = 0
    for m in reversed(messages):
        if m.get("role") == "assistant":
            index += 1
        elif m.get("role") == "user":
            content = m.get("content")
            if (
                wire == "openai"
                or isinstance(content, str)
                or any(b.get("type") != "tool_result" for b in content)
            ):
                break
    return index


def _sse(data: Any, event: str | None = None) -> bytes:
    payload = data if isinstance(data, bytes) else json.dumps(data, separators=(",", ":")).encode()
    return (b"event: " + event.encode() + b"\n" if event else b"") + b"data: " + payload + b"\n\n"


def _arg_pieces(step: dict[str, Any]) -> list[str]:
    raw = step["raw_args"] if "raw_args" in step else json.dumps(step.get("args") or {})
    third = max(1, len(raw) // 3)
    return [raw[i : i + third] for i in range(0, len(raw), third)] or [""]


def render_openai(
    turn: list[dict[str, Any]], model: str, n_messages: int, input_tokens: int
) -> list[bytes | float]:
    """A Chat Completions stream for one turn: SSE events, with floats meaning "sleep this long here"."""
    head = {"id": f"chatcmpl-{n_messages}", "object": "chat.completion.chunk", "created": 0, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    out: list[bytes | float] = [chunk({"role": "assistant", "content": ""})]
    tools, output, usage = 0, 0, None
    for step in turn:
        if "sleep" in step:
            out.append(float(step["sleep"]))
        if "thinking" in step:
            out.extend(chunk({"reasoning_content": p}) for p in _chunks(step["thinking"], step.get("chunks")))
        if "text" in step:
            out.extend(chunk({"content": p}) for p in _chunks(step["text"], step.get("chunks")))
            output += len(step["text"]) // 4
        if "tool" in step:
            pieces = _arg_pieces(step)
            call_id = step.get("id") or f"call_{tools + 1}_{n_messages}"
            first = {
                "index": tools,
                "id": call_id,
                "type": "function",
                "function": {"name": step["tool"], "arguments": ""},
            }
            out.append(chunk({"tool_calls": [first]}))
            out.extend(
                chunk({"tool_calls": [{"index": tools, "function": {"arguments": p}}]}) for p in pieces
            )
            tools += 1
        if "usage" in step:
            usage = step["usage"]
        if "error" in step:
            out.append(_sse({"error": {"message": step["error"], "type": step.get("type", "server_error")}}))
            return out
    out.append(chunk({}, "tool_calls" if tools else "stop"))
    u = usage or {"input": input_tokens, "output": max(1, output)}
    out.append(
        _sse(
            {
                **head,
                "choices": [],
                "usage": {
                    "prompt_tokens": u.get("input", 0),
                    "completion_tokens": u.get("output", 0),
                    "total_tokens": u.get("input", 0) + u.get("output", 0),
                },
            }
        )
    )
    out.append(b"data: [DONE]\n\n")
    return out


def render_anthropic(
    turn: list[dict[str, Any]], model: str, n_messages: int, input_tokens: int
) -> list[bytes | float]:
    """A Messages stream for one turn (see `render_openai`)."""
    usage = next((s["usage"] for s in turn if "usage" in s), None) or {"input": input_tokens}
    start: dict[str, Any] = {
        "id": f"msg_{n_messages}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": usage.get("input", 0), "output_tokens": 1},
    }
    out: list[bytes | float] = [
        _sse({"type": "message_start", "message": start}, "message_start"),
        _sse({"type": "ping"}, "ping"),
    ]
    index, tools, output = 0, 0, 0

    def block(content: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        out.append(
            _sse(
                {"type": "content_block_start", "index": index, "content_block": content},
                "content_block_start",
            )
        )
        out.extend(
            _sse({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta")
            for d in deltas
        )
        out.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1

    for step in turn:
        if "sleep" in step:
            out.append(float(step["sleep"]))
        if "thinking" in step:
            deltas = [
                {"type": "thinking_delta", "thinking": p}
                for p in _chunks(step["thinking"], step.get("chunks"))
            ]
            deltas.append({"type": "signature_delta", "signature": f"sig-{n_messages}-{index}"})
            block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
        if "text" in step:
            block(
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": p} for p in _chunks(step["text"], step.get("chunks"))],
            )
            output += len(step["text"]) // 4
        if "tool" in step:
            call_id = step.get("id") or f"toolu_{tools + 1}_{n_messages}"
            block(
                {"type": "tool_use", "id": call_id, "name": step["tool"], "input": {}},
                [{"type": "input_json_delta", "partial_json": p} for p in _arg_pieces(step)],
            )
            tools += 1
        if "error" in step:
            error = {"type": step.get("type", "api_error"), "message": step["error"]}
            out.append(_sse({"type": "error", "error": error}, "error"))
            return out
    delta = {"stop_reason": "tool_use" if tools else "end_turn", "stop_sequence": None}
    out.append(
        _sse(
            {
                "type": "message_delta",
                "delta": delta,
                "usage": {"output_tokens": usage.get("output", max(1, output))},
            },
            "message_delta",
        )
    )
    out.append(_sse({"type": "message_stop"}, "message_stop"))
    return out


class ModelServer:
    """Start with `start()` (or `with ModelServer(...) as server`); point providers at `openai_base_url` or
    `anthropic_base_url`. `requests` records every model request; `connections` counts accepted connections,
    `disconnects` clients that went away mid-response. Control endpoints, for a server in another process:
    `POST /_kgent/script`, `POST /_kgent/fault`, `GET /_kgent/requests`, `POST /_kgent/reset`."""

    def __init__(self, script: Script | str = "hello", *, model: str = "test-model") -> None:
        self.script = script
        self.model = model
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
        elif path == "/_kgent/requests":
            return {
                "requests": [
                    {"method": r.method, "path": r.path, "headers": r.headers, "body": r.raw.decode()}
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
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
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
                self._error_body(wire, fault),
                {"retry-after": fault.retry_after} if fault.retry_after is not None else None,
            )
            await writer.drain()
            return True
        body = json.loads(raw)
        messages = body.get("messages") or []
        turn = self.script[min(_turn_index(wire, messages), len(self.script) - 1)]
        render = render_openai if wire == "openai" else render_anthropic
        items = render(turn, body.get("model") or self.model, len(messages), len(raw) // 4)
        if fault is not None:
            items = self._inject(wire, items, fault)
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

    def _error_body(self, wire: str, fault: Fault) -> dict[str, Any]:
        if fault.kind == "context":
            message, etype, code = _CONTEXT_MESSAGE[wire]
        else:
            etype = fault.error_type or {
                401: "authentication_error",
                403: "permission_error",
                404: "not_found_error",
                429: "rate_limit_error",
                529: "overloaded_error",
            }.get(fault.status, "api_error")
            message, code = fault.message or f"{_REASONS.get(fault.status, 'Error')} (injected)", None
        if wire == "anthropic":
            return {"type": "error", "error": {"type": etype, "message": message}}
        return {"error": {"message": message, "type": etype, "code": code}}

    def _inject(self, wire: str, items: list[bytes | float], fault: Fault) -> list[bytes | float]:
        events = [i for i, item in enumerate(items) if isinstance(item, bytes)]
        at = events[fault.after_events] if fault.after_events < len(events) else len(items)
        if fault.kind == "cut":
            return [*items[:at], -1.0]
        if fault.kind == "no_done":
            return items[:-1]
        if fault.kind == "malformed":
            return [*items[:at], b"this line is not a server-sent event\n\n", *items[at:]]
        if fault.kind == "bad_json":
            return [*items[:at], b'data: {"choices": [{"delta": {"content": "unterminated\n\n', *items[at:]]
        if fault.kind == "stream_error":
            error = {"type": fault.error_type, "message": fault.message}
            event = (
                _sse({"type": "error", "error": error}, "error")
                if wire == "anthropic"
                else _sse({"error": error})
            )
            return [*items[:at], event]
        return items


def main(argv: list[str] | None = None) -> None:
    """`python -m kgent.testing [--port N] [--script NAME|FILE]`: print the URL, serve until killed."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m kgent.testing")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", default="hello")
    args = parser.parse_args(argv)

    async def run() -> None:
        server = ModelServer(args.script)
        srv = await server.serve(args.port)
        print(server.url, flush=True)
        async with srv:
            await srv.serve_forever()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())
