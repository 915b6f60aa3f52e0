"""RunService: what every front shares, `kgent run` included — the settings, the providers, the kernel, the
extensions, the rule book, and the runs (`start_run`, cancel, steer and follow up), each handed to the front's run port
(kgent.service.runs). No wire models here (`kgent run` loads no pydantic): Service (kgent.service.service) adds the
requests of the wire fronts. Owns every run it starts: `close()` cancels and awaits them.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kgent.config import prices, provider_config, require_key
from kgent.core.errors import SessionError
from kgent.core.paths import is_trusted
from kgent.ext.host import Extensions
from kgent.kernel import AgentKernel, KernelConfig
from kgent.permissions import RuleBook, RuleFiles
from kgent.providers.base import Provider, ProviderConfig
from kgent.providers.pricing import PriceTable
from kgent.sandbox.bwrap import Sandbox
from kgent.service.assembly import build_kernel, kernel_config
from kgent.service.commands import Command, Expansion, commands, expand
from kgent.service.errors import CONFIG, CONFLICT, INVALID_PARAMS, NOT_FOUND, ServiceError
from kgent.service.handshake import (
    Settings,
    default_mode,
    default_provider,
    effective_approval_timeout,
    normalize_provider,
)
from kgent.service.hostdiagnostics import DiagnosticsHost, HostDiagnostics
from kgent.service.hostfiles import DEFAULT_TIMEOUT, HostFileOps
from kgent.service.providers import ProviderPool
from kgent.service.request import RunRequest
from kgent.service.review import pending_note
from kgent.service.runs import FileScope, RunHandle, RunPort
from kgent.service.store import open_store
from kgent.session.paths import normalize_workspace
from kgent.tools.background import BackgroundError, BackgroundInfo
from kgent.tools.base import CommandRunner

log = logging.getLogger("kgent.service")

MAX_ENDED = 1024


def _positive(raw: str | None) -> float | None:
    try:
        value = float(raw) if raw else None
    except ValueError:
        return None
    return value if value is not None and value > 0 else None


def warm_async_backend() -> None:
    """Load the asyncio backend of anyio (which the HTTP stack's pool locks use), on a loop of this worker thread."""
    import anyio

    anyio.run(anyio.sleep, 0)


class RunService:
    """Runs for a front: `start_run` is the only way one begins (kgent.service.request says what it reads)."""

    def __init__(
        self,
        env: Mapping[str, str],
        settings: Settings,
        port: RunPort,
        *,
        extensions: Extensions | None = None,
        one_run: bool = False,
    ) -> None:
        """`extensions`: ones the front loaded itself (`kgent run` asks about an untrusted project first); by
        default they load on first use. `one_run`: this process serves one run (`kgent run`), so its sessions are
        written on the event loop's thread while the disk is fast (kgent.session.jsonl: `on_loop`)."""
        self.env = env
        self.settings = settings
        self.port = port
        self.store, self.persistent = open_store(on_loop=one_run)
        self._extensions: Extensions | None = extensions
        self._extensions_lock = threading.Lock()  # the provider pool may ask for them from its worker thread
        self.providers = ProviderPool(lambda config: self.extensions().create_provider(config))
        self.runs: dict[str, RunHandle] = {}
        self.ended: OrderedDict[str, str] = OrderedDict()
        self.run_sessions: dict[str, str] = {}  # run id → session id, for agent/review {runId}
        self.busy: dict[
            str, str
        ] = {}  # session id → what a request is doing to it (no run may start meanwhile)
        self.shut_down = False
        # session id → the model / mode its next runs use when the run names none (/model, /mode: agent/command)
        self.choices: dict[str, dict[str, str]] = {}
        # A front that serves only some workspaces (the HTTP front's --workspace-root) raises here for the others.
        self.workspace_guard: Callable[[str], None] | None = None
        self._kernel: AgentKernel | None = None
        self._kernel_config: KernelConfig | None = None
        self._prices: PriceTable | None = None
        # The rule files and the session rules (agent/rules works before any run made a kernel); a project's allows
        # count when it is trusted: the trust file, or the front's `trustProjectExtensions`.
        self.rules = RuleBook(RuleFiles(env=self.env, trusted=self._trusted))

    def extensions(self) -> Extensions:
        """The extensions of this daemon (loaded on first use); project trust follows `trustProjectExtensions`."""
        with self._extensions_lock:
            if self._extensions is None:
                self._extensions = Extensions(self.env, trust_project=self.settings.trust_project_extensions)
            else:
                self._extensions.with_trust(self.settings.trust_project_extensions)
            return self._extensions

    def provider_config(self, provider: str | None, model: str | None) -> ProviderConfig:
        """A run's provider settings: run params > initialize settings > environment."""
        settings = self.settings
        base = default_provider(settings, self.env)
        if provider is not None and normalize_provider(provider) != base:
            # Another provider than the connection's: its own defaults, only the keys come from the environment.
            env = {
                k: v
                for k, v in self.env.items()
                if k not in ("KGENT_PROVIDER", "KGENT_MODEL", "KGENT_BASE_URL")
            }
            config = provider_config(env, provider=provider, model=model, kgent_key=False)
        else:
            config = provider_config(
                self.env,
                provider=base,
                model=model or settings.model,
                base_url=settings.base_url,
                api_key=settings.api_key,
                script=settings.script,
            )
        require_key(config)
        return config

    def kernel_config(self) -> KernelConfig:
        if self._kernel_config is None:
            self._kernel_config = kernel_config(
                self.env,
                mode=default_mode(self.settings, self.env),
                price_table=self.prices(),
                approval_timeout=effective_approval_timeout(self.settings, self.env),
            )
        return self._kernel_config

    def prices(self) -> PriceTable:
        """The model price table (built in, updated from KGENT_PRICES), read once."""
        if self._prices is None:
            self._prices = prices(self.env)
        return self._prices

    def kernel(self, provider: Provider) -> AgentKernel:
        if self._kernel is None:
            hooks = self.extensions().hooks
            self._kernel = build_kernel(
                provider, self.kernel_config(), store=self.store, hooks=hooks, rules=self.rules
            )
        return self._kernel

    @property
    def sandbox(self) -> Sandbox | None:
        """Where shell commands run (kgent.sandbox.bwrap), once a run has built the kernel; None before."""
        return self._kernel.sandbox if self._kernel is not None else None

    def _trusted(self, project: Path) -> bool:
        setting = self.settings.trust_project_extensions  # the front's own trust setting, else the trust file
        return setting if setting is not None else is_trusted(project, self.env)

    def _guard(self, workspace: str) -> None:
        if self.workspace_guard is not None:
            self.workspace_guard(workspace)

    def live_run_id(self, session_id: str) -> str | None:
        run = self._kernel.live_run(session_id) if self._kernel is not None else None
        return run.run_id if run is not None else None

    def _check_idle(self, session_id: str) -> None:
        live = self.live_run_id(session_id)
        if live is not None:
            raise ServiceError(
                CONFLICT,
                f"session {session_id} already has a live run ({live}); steer or follow up instead",
                "session_busy",
                runId=live,
            )
        doing = self.busy.get(session_id)
        if doing is not None:
            raise ServiceError(CONFLICT, f"session {session_id} is being {doing}", "session_busy")

    async def start_run(self, p: RunRequest, *, runner: CommandRunner | None = None) -> RunHandle:
        """Create the run (it starts at once); the caller starts forwarding when it can take the events (the
        daemon: after the reply is written). `runner`: where its commands run, if not here (ACP's terminals)."""
        workspace = p.workspace
        if p.session_id is not None:
            self._check_idle(p.session_id)
            tree = await self.store.load(p.session_id)
            self._guard(tree.info.workspace)
            if p.parent_entry_id is not None and p.parent_entry_id not in tree.entries:
                raise ServiceError(
                    NOT_FOUND, f"no entry {p.parent_entry_id!r} in session {p.session_id}", "entry_not_found"
                )
            if workspace is None:
                workspace = tree.info.workspace
            elif normalize_workspace(workspace) != normalize_workspace(tree.info.workspace):
                raise ServiceError(
                    CONFIG,
                    f"session {p.session_id} belongs to another workspace: {tree.info.workspace}",
                    "config_error",
                )
        if workspace is not None:
            self._guard(workspace)
        # A slash command (kgent.service.commands) becomes its prompt here, for every front; /compact is no prompt.
        expansion = expand(
            p.text,
            Path(workspace) if workspace is not None else Path.cwd(),
            self.env,
            tree=tree if p.session_id is not None else None,
        )
        if expansion.builtin == "compact":
            return await self._compact_run(p, expansion)
        text = expansion.text
        if p.session_id is not None:  # rejections the model was not told of yet go before the prompt
            note = pending_note(tree.branch(p.parent_entry_id))
            text = f"{note}\n\n{text}" if note else text
        chosen = self.choices.get(p.session_id or "", {})
        provider = await self.providers.aget(self.provider_config(p.provider, p.model or chosen.get("model")))
        kernel = self.kernel(provider)
        if p.session_id is not None:
            self._check_idle(p.session_id)  # again: another request may have started one while we loaded
        scope = FileScope(p.session_id or "")
        files = self._host_files(scope)
        diagnostics = self._host_diagnostics(scope)
        run = kernel.create_run(
            text,
            images=p.images,
            workspace=workspace,
            session_id=p.session_id,
            parent_entry_id=p.parent_entry_id,
            mode=p.mode or chosen.get("mode") or default_mode(self.settings, self.env),
            provider=provider,
            cost_limit=p.cost_limit,
            max_turns=p.max_turns or self.settings.max_turns,
            fs=files,
            runner=runner,
            typed=expansion.typed if expansion.command is not None else None,
            diagnostics=diagnostics,
        )
        # named before the run's first await: its first file request carries them
        scope.run_id, scope.session_id = run.run_id, run.session_id
        self.run_sessions[run.run_id] = run.session_id
        while len(self.run_sessions) > MAX_ENDED:
            self.run_sessions.pop(next(iter(self.run_sessions)))
        handle = RunHandle(run, self.port, self._ended)
        if p.session_id is None:  # a new session: written by the run, or by us if it ends before it does
            handle.new_session_in = normalize_workspace(str(workspace))
            handle.keep_session = functools.partial(self._keep_session, run.session_id, handle.new_session_in)
        self.runs[run.run_id] = handle
        return handle

    async def _compact_run(self, p: RunRequest, expansion: Expansion) -> RunHandle:
        """`/compact [focus]` as the kernel's compaction run: run_start, compaction started/completed, run_end — the
        session's compaction (as agent/compact), no model turn of the agent."""
        sid = p.session_id
        if sid is None:
            raise ServiceError(
                INVALID_PARAMS,
                "/compact needs a sessionId: a new session has nothing to compact",
                "invalid_params",
            )
        provider = await self.providers.aget(self.provider_config(p.provider, p.model))
        kernel = self.kernel(provider)
        self._check_idle(sid)
        tree = await self.store.load(sid)
        self._check_idle(sid)  # again: another request may have started one while we loaded
        run = kernel.compact_run(
            sid,
            tree.info.workspace,
            focus=expansion.args,
            prompt=expansion.typed,
            mode=p.mode or default_mode(self.settings, self.env),
            provider=provider,
        )
        self.run_sessions[run.run_id] = sid
        handle = RunHandle(run, self.port, self._ended)
        self.runs[run.run_id] = handle
        return handle

    def commands(self, workspace: str) -> list[Command]:
        """The slash commands of `workspace` (agent/commands)."""
        self._guard(workspace)
        return commands(Path(workspace), self.env)

    def _host_files(self, scope: FileScope) -> HostFileOps | None:
        """FileOps through the client's buffers, when it offered them in `initialize`."""
        st = self.settings
        if not (st.fs_read or st.fs_write):
            return None
        host = self.port.text_files(scope)
        if host is None:
            return None
        timeout = st.fs_timeout or _positive(self.env.get("KGENT_FS_TIMEOUT")) or DEFAULT_TIMEOUT
        return HostFileOps(
            host,
            read=st.fs_read,
            write=st.fs_write,
            save=st.fs_save,
            timeout=timeout,
            unsaved_writes=not host.writes_save,
        )

    def _host_diagnostics(self, scope: FileScope) -> HostDiagnostics | None:
        """Diagnostics after edits from the client, when it offered them in `initialize` (else the kernel's own
        language servers, if configured)."""
        if not self.settings.diagnostics:
            return None
        host = self.port.text_files(scope)
        if not isinstance(host, DiagnosticsHost):
            return None
        timeout = self.settings.fs_timeout or _positive(self.env.get("KGENT_FS_TIMEOUT")) or DEFAULT_TIMEOUT
        return HostDiagnostics(host, timeout)

    async def _keep_session(self, session_id: str, workspace: str) -> None:
        """Create the (empty) session of a run that ended before it wrote it; nothing if it exists."""
        try:
            await self.store.create(workspace=workspace, session_id=session_id)
        except SessionError as exc:
            if exc.code != "session_exists":
                log.warning("could not keep session %s: %s", session_id, exc.message)

    def _ended(self, handle: RunHandle) -> None:
        self.runs.pop(handle.run_id, None)
        self.ended[handle.run_id] = handle.status or "failed"
        while len(self.ended) > MAX_ENDED:
            self.ended.popitem(last=False)

    def _handle(self, run_id: str) -> RunHandle | None:
        handle = self.runs.get(run_id)
        if handle is None and run_id not in self.ended:
            raise ServiceError(NOT_FOUND, f"no run {run_id!r}", "run_not_found")
        return handle

    def cancel(self, run_id: str, *, stop_background: bool = False) -> bool:
        for live in list(self.runs.values()):  # a sub-agent's run: cancel only it (its `task` call fails)
            cancelled = live.cancel_sub(run_id)
            if cancelled is not None:
                return cancelled
        handle = self._handle(run_id)
        return handle.cancel(stop_background=stop_background) if handle is not None else False

    async def background(self, session_id: str, stop: str | None = None) -> tuple[BackgroundInfo, ...]:
        """The session's background commands (none when it has no live run and none kept running); `stop`: the id
        of one to stop first, or "all"."""
        commands = self._kernel.background_of(session_id) if self._kernel is not None else None
        if commands is None:
            if stop is not None and stop != "all":
                raise ServiceError(NOT_FOUND, f"no background command {stop!r}", "background_not_found")
            return ()
        if stop == "all":
            await commands.stop_all()
        elif stop is not None:
            try:
                await commands.stop(stop)
            except BackgroundError as exc:
                raise ServiceError(NOT_FOUND, str(exc), "background_not_found") from None
        return commands.list()

    def _live(self, run_id: str) -> RunHandle:
        handle = self._handle(run_id)
        if handle is None or not handle.live:
            raise ServiceError(
                CONFLICT, f"run {run_id} has ended; start a new run with its sessionId", "run_not_live"
            )
        return handle

    def queue(self, run_id: str, text: str, *, steer: bool) -> None:
        """Steer or follow up a live run; the id of a live sub-agent's run reaches that sub-agent only."""
        if any(h.sub_run_queue(run_id, text, steer=steer) for h in list(self.runs.values())):
            return
        handle = self._live(run_id)
        if steer:
            handle.run.steer(text)
        else:
            handle.run.follow_up(text)

    def clear_queue(self, run_id: str) -> None:
        """Drop the run's queued steering and follow-up messages (`agent/clearQueue`)."""
        if any(h.sub_run_clear_queue(run_id) for h in list(self.runs.values())):
            return  # a sub-agent's run: only its queue
        self._live(run_id).run.clear_queue()

    def warm_up(self) -> None:
        """Run in a worker thread once the front has answered its handshake: import and prepare what the first run
        needs (providers, HTTP, tools, the argument checker, the extensions, the async backend of the HTTP stack)
        and build the default provider, so the person's first prompt pays for none of it. A run that starts
        meanwhile waits only for the modules it imports itself (Python's import lock), not for the rest."""
        for module in (
            "kgent.tools",
            "kgent.providers.scripted",
            "kgent.providers.openai",
            "kgent.providers.anthropic",
        ):
            try:
                importlib.import_module(module)
            except ImportError:  # pragma: no cover - an optional part missing: the run will say so
                log.debug("warm-up could not import %s", module, exc_info=True)
        from kgent.kernel.arguments import warm
        from kgent.service import wire
        from kgent.tools import CODING_TOOLS

        CODING_TOOLS()
        warm()
        wire.warm()  # the params and result models of a run (built at first use)
        try:
            self.extensions()  # the entry-point scan of the installed packages
            provider = self.providers.get(self.provider_config(None, None))
            warm_client = getattr(provider, "warm", None)  # an HTTP provider's client (httpx loads with it)
            if callable(warm_client):
                warm_client()
        except Exception:  # no key yet, or a bad setting: the first run reports it
            log.debug("warm-up could not build the default provider", exc_info=True)
        warm_async_backend()

    async def cancel_all(self, grace: float) -> None:
        """Cancel every live run and wait (up to `grace` s) until each has sent its run_end."""
        handles = list(self.runs.values())
        for handle in handles:
            handle.cancel()
        tasks = [h.task for h in handles if h.task is not None]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                task.cancel()

    async def flush(self) -> None:
        aclose: Callable[[], Any] | None = getattr(self.store, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except Exception:
                log.warning("closing the session store failed", exc_info=True)

    async def shutdown(self) -> None:
        self.shut_down = True
        await self.cancel_all(grace=5.0)
        await self._close_extensions()
        await self.flush()

    async def close(self, grace: float = 3.0) -> None:
        self.shut_down = True
        await self.cancel_all(grace)
        if self._kernel is not None:  # what cancelled runs left running ends with the service
            await self._kernel.stop_background()
        await self._close_extensions()
        await self.providers.aclose()
        await self.flush()

    async def _close_extensions(self) -> None:
        """Stop the MCP servers this daemon started."""
        if self._extensions is not None:
            await self._extensions.aclose()
