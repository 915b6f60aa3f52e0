"""One language server as Kgent's LSP client: a process over stdio (Content-Length framed JSON-RPC, lsprotocol
types), its open documents and their diagnostics, pulled (`textDocument/diagnostic`) when the server offers it,
else the ones it publishes. Never bounded here: the caller (kgent.lsp.pool) bounds every wait."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lsprotocol.types as lsp
from lsprotocol.converters import get_converter

from kgent.core.diagnostics import SEVERITIES, Diagnostic
from kgent.sandbox.procgroup import kill_group

log = logging.getLogger("kgent.lsp")
_converter = get_converter()
MAX_MESSAGE = 64 * 1024 * 1024  # a frame larger than this ends the connection


class LspError(Exception):
    """The server answered an error, broke the framing, or exited."""


@dataclass(slots=True)
class _Document:
    version: int
    text: str
    published: list[lsp.Diagnostic] | None = None  # the last publishDiagnostics for this version
    changed: asyncio.Event | None = None


def diagnostic_of(d: lsp.Diagnostic) -> Diagnostic:
    """An LSP diagnostic as Kgent's (1-based positions; the path is the caller's to fill in)."""
    severity = SEVERITIES[(d.severity or lsp.DiagnosticSeverity.Error) - 1]
    code = None if d.code is None or isinstance(d.code, bool) else str(d.code)
    start = d.range.start
    return Diagnostic("", start.line + 1, start.character + 1, severity, d.message, d.source or None, code)


class LspClient:
    """A started language server (`start`), its documents (`diagnostics`), and its end (`close`)."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], workspace: Path, language: str) -> None:
        self.argv = list(argv)
        self.env = dict(env)
        self.workspace = workspace
        self.language = language
        self.proc: asyncio.subprocess.Process | None = None
        self.pull = False  # the server answers textDocument/diagnostic
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._docs: dict[str, _Document] = {}
        self._reader: asyncio.Task[None] | None = None
        self._closed = False

    async def start(self) -> None:
        """Spawn the process and complete `initialize` / `initialized`."""
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=self.env,
            cwd=self.workspace,
            start_new_session=True,
        )
        self._reader = asyncio.create_task(self._read_loop())
        root = self.workspace.as_uri()
        params = lsp.InitializeParams(
            process_id=os.getpid(),
            root_uri=root,
            workspace_folders=[lsp.WorkspaceFolder(uri=root, name=self.workspace.name or root)],
            capabilities=lsp.ClientCapabilities(
                text_document=lsp.TextDocumentClientCapabilities(
                    synchronization=lsp.TextDocumentSyncClientCapabilities(),
                    publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True),
                    diagnostic=lsp.DiagnosticClientCapabilities(),
                ),
                workspace=lsp.WorkspaceClientCapabilities(configuration=True, workspace_folders=True),
            ),
        )
        raw = await self.request(lsp.INITIALIZE, _converter.unstructure(params))
        # Only the one capability is read: structuring a whole InitializeResult trips on servers' extras.
        caps = raw.get("capabilities") if isinstance(raw, dict) else None
        self.pull = isinstance(caps, dict) and bool(caps.get("diagnosticProvider"))
        await self.notify(lsp.INITIALIZED, {})

    async def diagnostics(self, path: Path, text: str) -> list[Diagnostic]:
        """The file's diagnostics once the server has `text` for it (opened or changed as needed)."""
        uri = path.as_uri()
        doc = self._docs.get(uri)
        if doc is not None and doc.text == text and doc.published is not None:
            return [diagnostic_of(d) for d in doc.published]
        if doc is None:
            doc = self._docs[uri] = _Document(1, text, changed=asyncio.Event())
            item = lsp.TextDocumentItem(uri=uri, language_id=self.language, version=1, text=text)
            await self.notify(
                lsp.TEXT_DOCUMENT_DID_OPEN,
                _converter.unstructure(lsp.DidOpenTextDocumentParams(text_document=item)),
            )
        elif doc.text != text:
            doc.version, doc.text, doc.published = doc.version + 1, text, None
            change = lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
            await self.notify(lsp.TEXT_DOCUMENT_DID_CHANGE, _converter.unstructure(change))
        if self.pull:
            ask = lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
            raw = await self.request(lsp.TEXT_DOCUMENT_DIAGNOSTIC, _converter.unstructure(ask))
            if isinstance(raw, dict) and raw.get("kind") == "full":
                report = _converter.structure(raw, lsp.FullDocumentDiagnosticReport)
                doc.published = list(report.items)
            elif doc.published is None:  # "unchanged" for a document it never reported: nothing to say
                doc.published = []
        while doc.published is None:  # push: wait for the server's publication of this version
            assert doc.changed is not None
            doc.changed.clear()
            await doc.changed.wait()
        return [diagnostic_of(d) for d in doc.published]

    # -- JSON-RPC ---------------------------------------------------------------------------------------------------
    async def request(self, method: str, params: Any) -> Any:
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        try:
            await self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
            return await future
        finally:
            self._pending.pop(msg_id, None)

    async def notify(self, method: str, params: Any) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def _send(self, message: dict[str, Any]) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None or self._closed or proc.returncode is not None:
            raise LspError("the language server is not running")
        body = json.dumps(message, separators=(",", ":")).encode("utf-8")
        try:
            proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise LspError(f"the language server closed its input ({exc})") from None

    async def _read_loop(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        reason = "the language server exited"
        try:
            while True:
                length = None
                while True:
                    line = await out.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii", "replace").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                if length is None or not 0 <= length <= MAX_MESSAGE:
                    reason = "the language server broke the framing"
                    return
                message = json.loads(await out.readexactly(length))
                if isinstance(message, dict):
                    await self._dispatch(message)
        except (ValueError, asyncio.IncompleteReadError, ConnectionError) as exc:
            reason = f"the language server broke the framing ({exc})"
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(LspError(reason))

    async def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:  # a response
            future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
            if future is not None and not future.done():
                error = message.get("error")
                if error is not None:
                    future.set_exception(
                        LspError(str(error.get("message") if isinstance(error, dict) else error))
                    )
                else:
                    future.set_result(message.get("result"))
            return
        if "id" in message:  # a request of the server's: answer what a minimal client can
            items = (
                (message.get("params") or {}).get("items") if method == lsp.WORKSPACE_CONFIGURATION else None
            )
            result: Any = [None] * len(items) if isinstance(items, list) else None
            with contextlib.suppress(LspError):
                await self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            return
        if method == lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            try:
                params = _converter.structure(message.get("params"), lsp.PublishDiagnosticsParams)
            except Exception:  # a malformed publication is the server's problem, not the run's
                log.info("lsp: malformed publishDiagnostics ignored")
                return
            doc = self._docs.get(params.uri)
            if doc is None or (params.version is not None and params.version != doc.version):
                return  # an older version's, or a file we did not open
            doc.published = list(params.diagnostics)
            if doc.changed is not None:
                doc.changed.set()

    async def close(self, *, graceful: bool = True) -> None:
        """`shutdown` and `exit` when it still answers (briefly; not for a server given up on), then its process
        group is killed and reaped."""
        if self._closed or self.proc is None:
            self._closed = True
            return
        proc = self.proc
        if graceful and proc.returncode is None:
            with contextlib.suppress(LspError, TimeoutError):
                await asyncio.wait_for(self.request(lsp.SHUTDOWN, None), 0.5)
                await self.notify(lsp.EXIT, None)
        self._closed = True
        await kill_group(proc)
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
