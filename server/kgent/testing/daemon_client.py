"""DaemonClient: a small asyncio JSON-RPC client that spawns `kgent serve --stdio` and talks to it over pipes —
what an editor shim does, in Python (the demo and the benchmarks use it). Knows only the wire (protocol.md)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kgent.daemon.framing import FrameError, FrameParser, frame


class RpcError(Exception):
    def __init__(self, error: Mapping[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.message = error.get("message")
        self.data = error.get("data")


def daemon_command() -> list[str]:
    """`kgent serve --stdio` from this interpreter's environment (falls back to `python -P -m kgent.daemon`: -P, so
    that nothing is imported from the workspace it starts in)."""
    script = Path(sys.executable).with_name("kgent.exe" if os.name == "nt" else "kgent")
    if script.is_file():
        return [str(script), "serve", "--stdio"]
    return [sys.executable, "-P", "-m", "kgent.daemon", "--stdio"]


class DaemonClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._ids = itertools.count(1)
        self._futures: dict[Any, asyncio.Future[Any]] = {}
        self.on_notification: Callable[[str, Any], None] = lambda method, params: None
        self.on_request: dict[str, Callable[[Any], Awaitable[Any]]] = {}
        self.cancelled: set[Any] = set()  # ids of daemon requests withdrawn by $/cancelRequest
        self._serving: dict[Any, asyncio.Task[None]] = {}
        self.stderr = bytearray()
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self._drain = asyncio.get_running_loop().create_task(self._drain_stderr())

    @classmethod
    async def spawn(
        cls,
        command: Sequence[str] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> DaemonClient:
        cmd = list(command or daemon_command())
        proc = await asyncio.create_subprocess_exec(
            *cmd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
        return cls(proc)

    # -- sending ----------------------------------------------------------------------------------------------------
    def _write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(json.dumps(message, separators=(",", ":")).encode()))

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)

    def send_request(self, method: str, params: Any = None) -> asyncio.Future[Any]:
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._futures[msg_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)
        return future

    async def request(self, method: str, params: Any = None) -> Any:
        return await self.send_request(method, params)

    # -- receiving --------------------------------------------------------------------------------------------------
    async def _read(self) -> None:
        assert self.proc.stdout is not None
        parser = FrameParser()
        try:
            while data := await self.proc.stdout.read(1 << 16):
                for item in parser.feed(data):
                    if isinstance(item, FrameError):
                        raise RuntimeError(f"bad frame from the daemon: {item.message}")
                    self._dispatch(json.loads(item))
        finally:
            for future in self._futures.values():
                if not future.done():
                    future.set_exception(ConnectionError("the daemon closed its stdout"))

    def _dispatch(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if method is None:
            future = self._futures.pop(msg.get("id"), None)
            if future is not None and not future.done():
                if "error" in msg:
                    future.set_exception(RpcError(msg["error"]))
                else:
                    future.set_result(msg.get("result"))
            return
        if "id" not in msg:
            if method == "$/cancelRequest":
                target = (msg.get("params") or {}).get("id")
                self.cancelled.add(target)
                task = self._serving.pop(target, None)
                if task is not None:
                    task.cancel()
            self.on_notification(method, msg.get("params"))
            return
        self._serving[msg["id"]] = asyncio.get_running_loop().create_task(self._serve(msg))

    async def _serve(self, msg: dict[str, Any]) -> None:
        handler = self.on_request.get(msg["method"])
        try:
            if handler is None:
                reply: dict[str, Any] = {
                    "error": {"code": -32601, "message": f"no handler for {msg['method']}"}
                }
            else:
                reply = {"result": await handler(msg.get("params"))}
        except asyncio.CancelledError:
            return  # withdrawn: the daemon no longer wants an answer
        except Exception as exc:
            reply = {"error": {"code": -32603, "message": str(exc)}}
        finally:
            self._serving.pop(msg["id"], None)
        self._write({"jsonrpc": "2.0", "id": msg["id"], **reply})

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while data := await self.proc.stderr.read(1 << 16):
            self.stderr += data

    # -- ending -----------------------------------------------------------------------------------------------------
    async def close(self, within: float = 5.0) -> int:
        """Send `exit`, close stdin, wait for the process (kill it after `within` seconds); its exit status."""
        with contextlib.suppress(ConnectionError, RuntimeError):
            self.notify("exit")
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            code = await asyncio.wait_for(self.proc.wait(), within)
        except TimeoutError:
            self.proc.kill()
            code = await self.proc.wait()
        for task in (self._reader, self._drain):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, 1.0)
        return code
