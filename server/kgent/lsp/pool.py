"""One session's language servers as a DiagnosticSource: each started on the first file it speaks for, confined like
an approved command (the sandbox, workspace read-only, no network, no credentials in its environment), every wait
bounded by its timeout; a server that fails or does not answer in time is noted once and not asked again."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kgent.core.diagnostics import Diagnostic
from kgent.lsp.config import ServerSpec
from kgent.sandbox.bwrap import SYSTEM_DIRS, Grant, Sandbox

if TYPE_CHECKING:
    from kgent.lsp.client import LspClient

log = logging.getLogger("kgent.lsp")
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|AUTH", re.IGNORECASE)


def server_env(env: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: ours minus anything that looks like a credential (as for commands)."""
    return {k: v for k, v in env.items() if not _SECRET_ENV.search(k)}


def _install_prefix(program: str) -> str | None:
    """The directory a program outside the system directories is installed under (a venv, node_modules), to be
    visible read-only in the sandbox; None for a system program."""
    real = os.path.realpath(program)
    if any(real.startswith(d.rstrip("/") + "/") for d in SYSTEM_DIRS):
        return None
    return os.path.dirname(os.path.dirname(real))


class LanguageServers:
    """The configured servers of one session's workspace; `collect` asks every server whose files match."""

    name = "language servers"
    needs_text = True

    def __init__(
        self,
        specs: Sequence[ServerSpec],
        workspace: Path,
        sandbox: Sandbox,
        env: Mapping[str, str] | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        self.specs = tuple(specs)
        self.workspace = workspace
        self.sandbox = sandbox
        self.env = dict(os.environ if env is None else env)
        self._clients: dict[str, LspClient] = {}
        self._starting: dict[str, asyncio.Lock] = {}
        self._dead: set[str] = set()
        self._stopping: set[asyncio.Task[None]] = set()
        self._notes: list[str] = list(notes)

    def handles(self, path: Path) -> bool:
        return any(s.handles(path) and s.name not in self._dead for s in self.specs)

    def running(self) -> dict[str, int]:
        """The servers started and not stopped: name → process id (its process group's)."""
        return {
            n: c.proc.pid
            for n, c in self._clients.items()
            if c.proc is not None and c.proc.returncode is None
        }

    def take_notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes

    async def collect(self, path: Path, text: str | None) -> list[Diagnostic] | None:
        if text is None:
            return []
        found: list[Diagnostic] | None = None
        for spec in self.specs:
            if spec.name in self._dead or not spec.handles(path):
                continue
            got = await self._ask(spec, path, text)
            if got is not None:
                found = [*(found or []), *got]
        return found

    async def _ask(self, spec: ServerSpec, path: Path, text: str) -> list[Diagnostic] | None:
        try:
            return await asyncio.wait_for(self._diagnostics(spec, path, text), spec.timeout)
        except TimeoutError:
            reason = f"did not answer within {spec.timeout:g} s"
        except (
            Exception
        ) as exc:  # a server's bad answer (or a missing program) ends that server, never the run
            from kgent.lsp.client import LspError  # loaded: a client was started, or its start failed

            reason = f"failed ({exc})" if isinstance(exc, LspError | OSError) else f"answered badly ({exc})"
        self._give_up(spec, reason)
        return None

    async def _diagnostics(self, spec: ServerSpec, path: Path, text: str) -> list[Diagnostic]:
        client = await self._client(spec)
        return await client.diagnostics(path, text)

    async def _client(self, spec: ServerSpec) -> LspClient:
        # lsprotocol's types (~0.3 s to import) load with the first language server, not with every kernel
        from kgent.lsp.client import LspClient, LspError

        lock = self._starting.setdefault(spec.name, asyncio.Lock())
        async with lock:
            client = self._clients.get(spec.name)
            if client is not None:
                return client
            program = shutil.which(spec.command[0], path=self.env.get("PATH"))
            if program is None:
                raise LspError(f"`{spec.command[0]}` is not on PATH")
            prefix = _install_prefix(program)
            grant = Grant(approved=True, outside=(prefix,) if prefix else ())
            argv, env = self.sandbox.wrap(
                [program, *spec.command[1:]], workspace=self.workspace, grant=grant, env=server_env(self.env)
            )
            client = LspClient(argv, env, self.workspace, spec.language)
            self._clients[spec.name] = client
            await client.start()
            return client

    def _give_up(self, spec: ServerSpec, reason: str) -> None:
        """Note it once, stop the server, and never ask it again in this session."""
        self._dead.add(spec.name)
        note = (
            f"the language server `{spec.name}` {reason}; no diagnostics from it for the rest of this session"
        )
        log.info("lsp: %s", note)
        self._notes.append(note)
        client = self._clients.pop(spec.name, None)
        if client is not None:  # stopped beside the run: the edit's result waits for nothing more
            task = asyncio.create_task(client.close(graceful=False))
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)

    async def aclose(self) -> None:
        """Stop every server (the session's last run ended)."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()
        if self._stopping:
            await asyncio.gather(*self._stopping, return_exceptions=True)
