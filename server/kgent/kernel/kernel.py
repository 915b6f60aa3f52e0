"""AgentKernel: assembles a provider, tools, a session store and the permission policy; creates AgentRuns.

The shared service (kgent.service) talks to the kernel through `AgentKernel.create_run` / `compact_run` and the
`AgentRun` they return; no front reaches it on its own.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path

from kgent.changes.tracker import ChangeTracker
from kgent.context.compaction import CompactionPolicy, Compactor
from kgent.context.projection import project
from kgent.core.diagnostics import DiagnosticSource
from kgent.core.errors import ConfigError, RunStateError
from kgent.core.events import BackgroundEvent, RunResult
from kgent.core.messages import ImagePart, Message
from kgent.files.ops import FileOps, LocalFileOps
from kgent.kernel.arguments import ArgumentChecks
from kgent.kernel.compaction_run import CompactionSpec, compaction
from kgent.kernel.config import KernelConfig
from kgent.kernel.hooks import HookContext, KernelHooks, NoHooks, observer
from kgent.kernel.images import no_vision_error, sees_images
from kgent.kernel.loop import Loop, RunSpec
from kgent.kernel.run import AgentRun
from kgent.kernel.subagents import SubAgents
from kgent.lsp.config import ServersConfig, read_servers
from kgent.lsp.pool import LanguageServers
from kgent.permissions import RuleBook, Scoped, SessionRules, normalize_mode
from kgent.providers.base import Provider
from kgent.providers.pricing import builtin_prices
from kgent.sandbox import spill
from kgent.sandbox.bwrap import Sandbox, detect
from kgent.session.entries import SessionEntry, new_id
from kgent.session.memory import InMemorySessionStore
from kgent.session.store import SessionStore
from kgent.tools import CODING_TOOLS
from kgent.tools.background import BackgroundCommands, BackgroundInfo
from kgent.tools.base import ChangeTracking, CommandRunner, Tool
from kgent.tools.bash import LOCAL_RUNNER


class AgentKernel:
    """One kernel serves many runs (at most one live run per session)."""

    def __init__(
        self,
        provider: Provider,
        *,
        tools: Iterable[Tool] | None = None,
        store: SessionStore | None = None,
        config: KernelConfig | None = None,
        fs: FileOps | None = None,
        sandbox: Sandbox | None = None,
        runner: CommandRunner | None = None,
        hooks: KernelHooks | None = None,
        rules: RuleBook | None = None,
    ) -> None:
        self.provider = provider
        # The rule files (project, user; re-read when they change) and the session rules held by session.
        self.rules: RuleBook = rules if rules is not None else RuleBook()
        # What an outer layer (kgent.ext) adds to each run: tools and hooks (kernel/hooks.py).
        self.hooks: KernelHooks = hooks if hooks is not None else NoHooks()
        self.tools: tuple[Tool, ...] = tuple(tools) if tools is not None else tuple(CODING_TOOLS())
        self.arguments = ArgumentChecks(self.tools)  # each tool's schema compiled once (kernel/arguments.py)
        self.store: SessionStore = store if store is not None else InMemorySessionStore()
        self.config = config or KernelConfig()
        self.fs: FileOps = fs or LocalFileOps()
        # Where shell commands run: bubblewrap when it works here (probed once per process), else NoSandbox, under
        # which every shell command is asked.
        self.sandbox: Sandbox = sandbox if sandbox is not None else detect()
        # Where the bash tool runs commands: locally by default; a front may run them elsewhere (ACP: the client's
        # terminal), and a runner that is not sandboxed makes every shell command ask.
        self.runner: CommandRunner = runner if runner is not None else LOCAL_RUNNER
        spill.sweep()  # spill files of runs whose process died
        self.project: Callable[[Sequence[SessionEntry]], list[Message]] = project
        # Context compaction (kgent.context): a policy the loop asks before each request; None turns it off.
        self.compactor: CompactionPolicy | None = Compactor()
        self._live: dict[str, AgentRun] = {}
        # The language servers of each live session (kgent.lsp), stopped when its last run ends.
        self._servers: dict[str, LanguageServers] = {}
        # The background commands of each session (the bash tool's `background: true`): stopped when a run of the
        # session ends, unless it was cancelled without asking for it (kernel/loop.py), and when the kernel closes.
        self._background: dict[str, BackgroundCommands] = {}
        self._stopping: set[asyncio.Task[None]] = set()
        normalize_mode(self.config.mode)  # fail at assembly, not mid-run

    def create_run(
        self,
        prompt: str,
        *,
        images: Sequence[ImagePart] = (),
        workspace: str | Path | None = None,
        session_id: str | None = None,
        parent_entry_id: str | None = None,
        mode: str | None = None,
        provider: Provider | None = None,
        cost_limit: float | None = None,
        max_turns: int | None = None,
        fs: FileOps | None = None,
        runner: CommandRunner | None = None,
        typed: str | None = None,
        diagnostics: DiagnosticSource | None = None,
    ) -> AgentRun:
        """Start a run now (inside a running event loop). `session_id` resumes that session at its active leaf
        or at `parent_entry_id` (a fork); without it a new session is created. `cost_limit` (US dollars; default
        `KernelConfig.cost_limit`) ends the run `failed` (`cost_limit`) before a model call would pass it; it needs
        the model's price (ConfigError otherwise). `max_turns` (default `KernelConfig.max_turns`) ends the run
        `failed` (`max_turns`) after that many model turns. `fs` is this run's file access (an editor's buffers;
        default the kernel's); `runner` where its shell commands run (default the kernel's). `workspace` defaults to
        the current directory. `typed`: what the user typed when `prompt` is its expansion (a slash command); the
        prompt's message entry records it. `diagnostics`: the host's source of diagnostics after edits (default: the
        language servers configured for the workspace, if any). `images` go with the prompt (checked by the caller: kgent.core.images);
        a model the table does not know to see images refuses them with ConfigError before any request."""
        ws = Path(workspace) if workspace is not None else Path.cwd()
        if not ws.is_absolute():
            raise ConfigError(f"workspace must be an absolute path, got {str(workspace)!r}")
        if not ws.is_dir():
            raise ConfigError(f"workspace {str(ws)!r} is not a directory")
        run_mode = normalize_mode(mode or self.config.mode)
        run_provider = provider or self.provider
        limit = self._cost_limit(cost_limit, run_provider)
        if images and not sees_images(run_provider, self.config.prices or builtin_prices()):
            raise no_vision_error(run_provider, self.config.prices or builtin_prices())
        if max_turns is not None and (
            isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1
        ):
            raise ConfigError(f"max turns must be a positive integer, got {max_turns!r}")
        sid = session_id or new_id()
        self._check_idle(sid)
        run_id = "run-" + os.urandom(6).hex()
        ctx = HookContext(run_id=run_id, session_id=sid, workspace=ws.resolve(), mode=run_mode)
        run = AgentRun(run_id=run_id, session_id=sid, observer=observer(self.hooks, ctx))
        spec = RunSpec(
            hook_context=ctx,
            prompt=prompt,
            images=tuple(images),
            workspace=ws.resolve(),
            mode=run_mode,
            provider=run_provider,
            session_id=sid,
            resume=session_id is not None,
            parent_entry_id=parent_entry_id,
            cost_limit=limit,
            max_turns=max_turns,
            fs=fs,
            runner=runner,
            typed=typed,
            diagnostics=diagnostics,
        )
        self.rules.workspaces[sid] = ws.resolve()
        self._launch(run, Loop(self, spec))
        return run

    def compact_run(
        self,
        session_id: str,
        workspace: str,
        *,
        focus: str = "",
        prompt: str = "/compact",
        mode: str | None = None,
        provider: Provider | None = None,
    ) -> AgentRun:
        """Start a compaction of the stored session `session_id` (of `workspace`) as a run of its own, with the
        lifecycle of every run (kernel/compaction_run.py): the session has it as its live run until it ends.
        `focus` tells the summary what to keep; `prompt` is what the user typed (its `run_start` says it)."""
        self._check_idle(session_id)
        run_mode = normalize_mode(mode or self.config.mode)
        run_id = "run-" + os.urandom(6).hex()
        ctx = HookContext(run_id=run_id, session_id=session_id, workspace=Path(workspace), mode=run_mode)
        run = AgentRun(run_id=run_id, session_id=session_id, observer=observer(self.hooks, ctx))
        spec = CompactionSpec(
            session_id=session_id,
            workspace=workspace,
            mode=run_mode,
            prompt=prompt,
            focus=focus,
            provider=provider or self.provider,
            store=self.store,
            config=self.config,
        )
        self._launch(run, functools.partial(compaction, spec))
        return run

    def _check_idle(self, session_id: str) -> None:
        live = self._live.get(session_id)
        if live is not None and not live.done:
            raise RunStateError(
                f"session {session_id} already has a live run ({live.run_id}); steer or follow up instead"
            )

    def _launch(self, run: AgentRun, body: Callable[[AgentRun], Awaitable[RunResult]]) -> None:
        """Make `run` its session's live run and start `body` in it; the session is forgotten when it ends."""
        sid = run.session_id
        self._live[sid] = run
        hold, release = getattr(self.store, "hold", None), getattr(self.store, "release", None)
        if hold is not None:  # a durable store keeps the session's file locked while the run is live
            hold(sid)
        run._start(body)
        run.add_done_callback(lambda _: self._ended(run, release))

    def _ended(self, run: AgentRun, release: Callable[[str], None] | None) -> None:
        spill.release(run.run_id)  # spill files live as long as their run
        if self._live.get(run.session_id) is run:
            # The session's last run: forget its state (a long-lived daemon serves thousands of sessions). Its
            # 'always' rules are in its permission entries and come back when a run resumes it (restore_rules).
            del self._live[run.session_id]
            self.rules.release(run.session_id)
            servers = self._servers.pop(run.session_id, None)
            if servers is not None:
                self._supervise(servers.aclose())
            commands = self._background.get(run.session_id)
            if commands is not None and not commands.running():  # else a cancel left them running
                del self._background[run.session_id]
                self._supervise(commands.aclose())
        if release is not None:
            release(run.session_id)

    def _supervise(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    def background(self, session_id: str) -> BackgroundCommands:
        """The session's background commands (created on first use)."""
        found = self._background.get(session_id)
        if found is None:
            found = self._background[session_id] = BackgroundCommands(
                session_id,
                limit=self.config.max_background,
                on_change=functools.partial(self._background_changed, session_id),
            )
        return found

    def background_of(self, session_id: str) -> BackgroundCommands | None:
        """The session's background commands, if it has any (ended ones included until its runs end)."""
        return self._background.get(session_id)

    async def end_background(self, session_id: str, *, keep: bool) -> None:
        """A run of the session is ending: stop its background commands, unless `keep` (a cancel that did not ask)."""
        commands = self._background.get(session_id)
        if commands is not None and not keep:
            await commands.stop_all()

    async def stop_background(self) -> None:
        """Stop every session's background commands (Kgent is exiting)."""
        for commands in list(self._background.values()):
            await commands.stop_all()

    def _background_changed(self, session_id: str, info: BackgroundInfo) -> None:
        run = self.live_run(session_id)
        if run is not None:
            run.emit(
                BackgroundEvent(
                    id=info.id,
                    command=info.command,
                    state=info.state,
                    exit_code=info.exit_code,
                    tool_call_id=info.tool_call_id,
                    started_run_id=info.run_id,
                    output_bytes=info.output_bytes,
                    sandbox=info.sandbox,
                )
            )

    def _cost_limit(self, explicit: float | None, provider: Provider) -> float | None:
        limit = explicit if explicit is not None else self.config.cost_limit
        if limit is None:
            return None
        if not limit > 0:
            raise ConfigError(f"a cost limit must be a positive number of US dollars, got {limit!r}")
        if (self.config.prices or builtin_prices()).price(provider.model) is None:
            raise ConfigError(
                f"a cost limit needs the price of model {provider.model!r}, which the price table does not know: "
                "add it in a KGENT_PRICES file (see README, Configuration)"
            )
        return limit

    def live_run(self, session_id: str) -> AgentRun | None:
        run = self._live.get(session_id)
        return run if run is not None and not run.done else None

    def rules_for(self, session_id: str) -> SessionRules:
        """The session's own rules (its 'always' answers this session)."""
        return self.rules.session(session_id)

    def rules_in_force(self, session_id: str, workspace: Path) -> list[Scoped]:
        """Every rule that speaks for a call of this session: its own, the project's and the user's files."""
        return self.rules.in_force(session_id, workspace)

    def restore_rules(self, session_id: str, branch: Sequence[SessionEntry]) -> None:
        """Reload the session's rules from the latest permission (or rules view's `rules`) entry of a resumed
        branch."""
        if self.rules.held(session_id):
            return
        for entry in reversed(branch):
            if entry.type in ("permission", "rules") and "rules" in entry.data:
                self.rules.restore(session_id, entry.data["rules"])
                return

    def language_servers(self, session_id: str, workspace: Path) -> LanguageServers | None:
        """The session's language servers for diagnostics after edits: the user's config.toml and, once the project
        is trusted, its `.kgent/config.toml` (`[language_servers.NAME]`); None when none is configured (or
        `KernelConfig.language_servers` is off). Nothing starts until a file one of them speaks for is edited."""
        if not self.config.language_servers:
            return None
        servers = self._servers.get(session_id)
        if servers is not None:
            return servers
        notes: list[str] = []
        try:
            found = read_servers(workspace, trusted=self.rules.files.is_trusted(workspace))
        except ConfigError as exc:
            found, notes = ServersConfig(), [f"no language servers: {exc.message}"]
        if found.untrusted:
            names = ", ".join(f"`{n}`" for n in found.untrusted)
            notes.append(
                f"the project's language servers ({names}) run once the project is trusted (kgent extensions --trust)"
            )
        if not found.servers and not notes:
            return None
        servers = self._servers[session_id] = LanguageServers(
            found.servers, workspace, self.sandbox, notes=notes
        )
        return servers

    def subagents(self, loop: Loop, run: AgentRun, tracker: ChangeTracking, call_id: str) -> SubAgents:
        """The `task` tool's sub-agent runner for one tool call of `run`."""
        return SubAgents(self, loop, run, tracker, call_id)

    def change_tracker(self, workspace: Path) -> ChangeTracking:
        """A run's change tracking (override to record changes differently)."""
        return ChangeTracker(workspace)

    async def aclose(self) -> None:
        for run in list(self._live.values()):
            run.cancel()
        for run in list(self._live.values()):
            await run.result()
        for servers in list(self._servers.values()):
            await servers.aclose()
        for commands in list(self._background.values()):
            await commands.aclose()
        self._background.clear()
        if self._stopping:
            await asyncio.gather(*self._stopping, return_exceptions=True)
        await self.provider.aclose()
        await self.store.aclose()
