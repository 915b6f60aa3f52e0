"""KgentAgent: the SDK's `Agent` over the shared service — sessions in the fronts' common store, a prompt is one
kernel run whose events stream as `session/update`s and whose permission prompts become `session/request_permission`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from acp import Client, RequestError
from acp import helpers as H
from acp import schema as S

from kgent.acp.mcp import session_servers
from kgent.config import (
    context_overrides,
    cost_limit,
    max_turns,
    permission_mode,
    prices,
    provider_config,
    require_key,
)
from kgent.core.errors import ConfigError, KgentError, SessionError
from kgent.core.events import (
    MessageDelta,
    PermissionRequest,
    PlanEvent,
    RunEnd,
    SubRunEvent,
    ToolCallEvent,
    ToolUpdate,
)
from kgent.ext.host import Extensions
from kgent.kernel import AgentKernel, AgentRun, KernelConfig
from kgent.permissions.modes import MODE_DESCRIPTIONS
from kgent.providers.base import ProviderConfig
from kgent.service.providers import ProviderPool
from kgent.service.store import open_store
from kgent.session.paths import normalize_workspace
from kgent.tools.base import CommandRunner
from kgent.tools.ops import FileOps

from . import updates as U
from .files import client_file_ops
from .handshake import API_KEY_AUTH, ClientOffer, initialize_result
from .live import LiveOutput
from .terminal import ClientTerminalRunner

log = logging.getLogger("kgent.acp")

MODES = (
    S.SessionMode(id="plan", name="Plan", description=MODE_DESCRIPTIONS["plan"]),
    S.SessionMode(id="ask", name="Ask", description=MODE_DESCRIPTIONS["ask"]),
    S.SessionMode(id="auto", name="Auto", description=MODE_DESCRIPTIONS["auto"]),
    S.SessionMode(id="full", name="Full access", description=MODE_DESCRIPTIONS["full"]),
    S.SessionMode(id="risk_based", name="Risk-based", description=MODE_DESCRIPTIONS["risk_based"]),
)
_MODE_IDS = frozenset(m.id for m in MODES)
_DIFF_LIMIT = 1 << 20  # bytes: larger files are not sent as diffs


class _Session:
    def __init__(self, workspace: str, mode: str) -> None:
        self.workspace = workspace
        self.mode = mode
        self.model: str | None = None  # chosen with session/set_config_option; None: the environment's
        self.run: AgentRun | None = None
        self.asks: set[asyncio.Task[None]] = set()
        self.before: dict[
            str, tuple[str, str | None]
        ] = {}  # tool call id → (absolute path, text before the edit)
        self.agents: dict[str, str] = {}  # live sub-agent run id → its name
        self.terminals: dict[str, str] = {}  # tool call id → the client's terminal running its command


async def _read_text(fs: FileOps, path: str) -> str | None:
    """A file's text as the tools see it (through the client's buffers when it serves them); None if absent."""
    try:
        if await fs.size(Path(path)) > _DIFF_LIMIT:
            return None
        return (await fs.read_bytes(Path(path))).decode("utf-8", "replace")
    except OSError:
        return None


class KgentAgent:
    """One ACP connection. Requests for different sessions run concurrently; one prompt at a time per session."""

    def __init__(self, env: Mapping[str, str], offer: ClientOffer | None = None) -> None:
        self.env = env
        # what the client offered in `initialize` (kgent.acp.handshake may have answered it before we existed)
        self.offer = offer or ClientOffer()
        self.store, _ = open_store()
        # Extensions (kgent.ext): their providers, tools and hooks; a project's own run when the user's trust file
        # trusts it (`kgent extensions --trust`): ACP has no setting for it.
        self._extensions: Extensions | None = None
        self._extensions_lock = threading.Lock()  # the provider pool may ask for them from its worker thread
        self.providers = ProviderPool(lambda config: self.extensions().create_provider(config))
        self.sessions: dict[str, _Session] = {}
        self.client: Client | None = None
        self._kernels: dict[
            str, AgentKernel
        ] = {}  # per session: each has its own FileOps (fs/* name the session)

    def extensions(self) -> Extensions:
        with self._extensions_lock:
            if self._extensions is None:
                self._extensions = Extensions(self.env)
            return self._extensions

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    # -- handshake ------------------------------------------------------------------------------------------------
    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any
    ) -> S.InitializeResponse:
        """An `initialize` the stdlib handshake left to the SDK (kgent.acp.handshake answers the usual ones)."""
        if isinstance(client_capabilities, S.ClientCapabilities):
            self.offer.take(client_capabilities.model_dump(by_alias=True))
        return S.InitializeResponse.model_validate(initialize_result(protocol_version))

    async def authenticate(self, method_id: str, **kwargs: Any) -> S.AuthenticateResponse | None:
        if method_id != API_KEY_AUTH["id"]:
            raise RequestError.invalid_params({"methodId": f"unknown auth method {method_id!r}"})
        try:
            self._provider_config()
        except ConfigError as exc:
            raise RequestError.auth_required({"message": exc.message}) from None
        return S.AuthenticateResponse()

    # -- sessions -------------------------------------------------------------------------------------------------
    def _modes(self, current: str) -> S.SessionModeState:
        return S.SessionModeState(current_mode_id=current, available_modes=list(MODES))

    def _models(self) -> list[str]:
        """The models a session may pick: the scripts for the scripted provider; else the configured model and the
        provider's default (Kgent keeps no catalogue of a vendor's models; KGENT_MODEL names any)."""
        from kgent.config import DEFAULTS
        from kgent.providers.scripted import builtin_scripts

        config = provider_config(self.env)
        if config.provider == "scripted":
            return builtin_scripts()
        default = DEFAULTS.get(config.provider, ("", ""))[1]
        return list(dict.fromkeys(m for m in (config.model, default) if m))

    def _config_options(self, session: _Session) -> list[Any]:
        current = session.model or provider_config(self.env).model
        return [
            S.SessionConfigOptionSelect(
                type="select",
                id="model",
                name="Model",
                category="model",
                current_value=current,
                options=[S.SessionConfigSelectOption(value=m, name=m) for m in self._models()],
            )
        ]

    def _default_mode(self) -> str:
        mode = permission_mode(self.env)
        return mode if mode in _MODE_IDS else "ask"

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> S.NewSessionResponse:
        workspace = normalize_workspace(cwd)
        servers = session_servers(mcp_servers)
        info = await self.store.create(workspace=workspace)
        self.extensions().set_session_servers(info.id, servers)
        session = self.sessions[info.id] = _Session(workspace, self._default_mode())
        return S.NewSessionResponse(
            session_id=info.id, modes=self._modes(session.mode), config_options=self._config_options(session)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> S.LoadSessionResponse:
        """Replay the session's active branch as `session/update`s, then answer (ACP: the history comes first)."""
        from kgent.context.projection import project
        from kgent.tools import CODING_TOOLS

        servers = session_servers(mcp_servers)
        tree = await self._load(session_id)
        self.extensions().set_session_servers(session_id, servers)
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = _Session(tree.info.workspace, self._default_mode())
        kinds = {tool.name: str(tool.kind) for tool in CODING_TOOLS()}
        for update in U.replay(project(tree.branch()), kinds, tree.info.workspace):
            await self._update(session_id, update)
        return S.LoadSessionResponse(
            modes=self._modes(session.mode), config_options=self._config_options(session)
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> S.ListSessionsResponse:
        """The sessions of one workspace (any front's), newest first as the store lists them; no paging."""
        if cwd is None:
            raise RequestError.invalid_params({"cwd": "Kgent lists the sessions of one workspace: give cwd"})
        infos = await self.store.list(normalize_workspace(cwd))
        return S.ListSessionsResponse(
            sessions=[
                S.SessionInfo(
                    session_id=i.id, cwd=i.workspace, title=i.title or None, updated_at=i.updated or None
                )
                for i in infos
            ]
        )

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> S.SetSessionConfigOptionResponse:
        """`model` is the one option: the session's model from its next prompt on."""
        if config_id != "model":
            raise RequestError.invalid_params(
                {"configId": f"unknown option {config_id!r}; the one option is 'model'"}
            )
        if not isinstance(value, str) or value not in self._models():
            raise RequestError.invalid_params({"value": f"unknown model {value!r}; one of {self._models()}"})
        session = await self._session(session_id)
        session.model = value
        return S.SetSessionConfigOptionResponse(config_options=self._config_options(session))

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> S.SetSessionModeResponse:
        if mode_id not in _MODE_IDS:
            raise RequestError.invalid_params(
                {"modeId": f"unknown mode {mode_id!r}; one of {sorted(_MODE_IDS)}"}
            )
        session = await self._session(session_id)
        session.mode = mode_id  # from the next prompt on: a live run keeps the mode it started with
        return S.SetSessionModeResponse()

    async def _load(self, session_id: str) -> Any:
        try:
            return await self.store.load(session_id)
        except SessionError as exc:
            raise (
                RequestError.resource_not_found(session_id) if "not_found" in exc.code else _internal(exc)
            ) from None

    async def _session(self, session_id: str) -> _Session:
        session = self.sessions.get(session_id)
        if (
            session is None
        ):  # a session of the store this connection has not loaded (e.g. from the stdio daemon)
            tree = await self._load(session_id)
            session = self.sessions[session_id] = _Session(tree.info.workspace, self._default_mode())
        return session

    # -- prompts --------------------------------------------------------------------------------------------------
    def _provider_config(self, model: str | None = None) -> ProviderConfig:
        """The provider from the environment (KGENT_PROVIDER, KGENT_MODEL, KGENT_BASE_URL, the key variables)."""
        config = provider_config(self.env, model=model)
        require_key(config)
        return config

    async def _kernel_for(self, session_id: str, model: str | None) -> tuple[AgentKernel, Any]:
        try:
            provider = await self.providers.aget(self._provider_config(model))
        except ConfigError as exc:
            raise RequestError.auth_required({"message": exc.message}) from None
        kernel = self._kernels.get(session_id)
        if kernel is None:
            # No approval timeout: the client owns its permission prompts (and cancels the turn to give up).
            config = KernelConfig(
                **context_overrides(self.env),
                approval_timeout=None,
                prices=prices(self.env),
                cost_limit=cost_limit(self.env),
                max_turns=max_turns(self.env),
            )
            fs: FileOps | None = None
            offer = self.offer
            if self.client is not None and (offer.fs_read or offer.fs_write):
                fs = client_file_ops(self.client, session_id, read=offer.fs_read, write=offer.fs_write)
            runner: CommandRunner | None = None
            if self.client is not None and offer.terminal:  # commands run in the client's terminal (asked)
                runner = ClientTerminalRunner(self.client, session_id, self._terminal_opened(session_id))
            kernel = self._kernels[session_id] = AgentKernel(
                provider, store=self.store, config=config, fs=fs, runner=runner, hooks=self.extensions().hooks
            )
        return kernel, provider

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> S.PromptResponse:
        session = await self._session(session_id)
        if session.run is not None and not session.run.done:
            raise RequestError.invalid_request(
                {"message": f"session {session_id} already has a prompt running"}
            )
        kernel, provider = await self._kernel_for(session_id, session.model)
        try:
            run = kernel.create_run(
                U.prompt_text(prompt),
                workspace=session.workspace,
                session_id=session_id,
                mode=session.mode,
                provider=provider,
            )
        except KgentError as exc:
            raise _internal(exc) from None
        session.run = run
        result = None
        live = LiveOutput(lambda call_id, text: self._update(session_id, U.live_output(call_id, text)))
        try:
            async for event in run:
                if isinstance(event, SubRunEvent):  # a sub-agent's calls and prompts show as this turn's
                    shown = U.sub_agent_event(event, session.agents)
                    if shown is None:
                        continue
                    event = shown
                if type(event) is MessageDelta:
                    chunk = (
                        H.update_agent_message_text if event.kind == "text" else H.update_agent_thought_text
                    )
                    await self._update(session_id, chunk(event.delta))
                elif isinstance(event, ToolCallEvent):
                    if event.kind in ("edit", "delete", "move") and event.path:
                        absolute = str(Path(session.workspace, event.path))
                        session.before[event.tool_call_id] = (absolute, await _read_text(kernel.fs, absolute))
                    await self._update(session_id, U.tool_call_start(event, session.workspace))
                elif isinstance(event, ToolUpdate):
                    terminal = session.terminals.get(event.tool_call_id)
                    if event.status == "in_progress":
                        if event.output and terminal is None:  # a terminal shows its own output live
                            await live.feed(event.tool_call_id, event.output)
                        elif not event.output:
                            await self._update(session_id, U.tool_call_update(event, None))
                        continue
                    await live.end(event.tool_call_id)
                    diff = await self._diff(kernel.fs, session, event)
                    await self._update(session_id, U.tool_call_update(event, diff, terminal))
                elif isinstance(event, PlanEvent):
                    await self._update(session_id, U.plan_update(event))
                elif isinstance(event, PermissionRequest):
                    if not run.cancel_requested:
                        self._ask(session, session_id, run, event)
                elif isinstance(event, RunEnd):
                    result = event.result
        finally:
            for task in list(session.asks):
                task.cancel()
            live.close()
            session.before.clear()
            session.terminals.clear()
        if result is None:  # pragma: no cover - every run ends with run_end
            raise RequestError.internal_error({"message": "the run ended without a result"})
        reason = U.stop_reason(result)
        if reason is None:
            error = result.error or {"code": "failed", "message": "the run failed"}
            raise RequestError.internal_error({"code": error.get("code"), "message": error.get("message")})
        return S.PromptResponse(stop_reason=reason)

    def _terminal_opened(self, session_id: str) -> Callable[[str, str], Awaitable[None]]:
        """What the terminal runner calls once a command's terminal exists: embed it in the tool call."""

        async def embed(tool_call_id: str, terminal_id: str) -> None:
            session = self.sessions.get(session_id)
            if session is not None:
                session.terminals[tool_call_id] = terminal_id
            await self._update(session_id, U.terminal_attached(tool_call_id, terminal_id))

        return embed

    async def _diff(
        self, fs: FileOps, session: _Session, event: ToolUpdate
    ) -> S.FileEditToolCallContent | None:
        if event.status != "completed" or event.is_error or event.tool_call_id not in session.before:
            return None
        path, old = session.before.pop(event.tool_call_id)
        new = await _read_text(fs, path)
        return H.tool_diff_content(path, new if new is not None else "", old)

    def _ask(self, session: _Session, session_id: str, run: AgentRun, event: PermissionRequest) -> None:
        task = asyncio.get_running_loop().create_task(
            self._await_answer(session_id, run, event, session.workspace)
        )
        session.asks.add(task)
        task.add_done_callback(session.asks.discard)

    async def _await_answer(
        self, session_id: str, run: AgentRun, event: PermissionRequest, workspace: str
    ) -> None:
        assert self.client is not None
        options = [S.PermissionOption(option_id=o.option_id, name=o.name, kind=o.kind) for o in event.options]
        try:
            response = await self.client.request_permission(
                session_id=session_id, tool_call=U.permission_tool_call(event, workspace), options=options
            )
            outcome = response.outcome
            option = outcome.option_id if isinstance(outcome, S.AllowedOutcome) else None
        except asyncio.CancelledError:
            raise
        except Exception:  # an error answer (or a broken one) is a reject
            log.debug("permission request %s failed", event.request_id, exc_info=True)
            option = "reject_once"
        if option is None:  # `cancelled`: the client is cancelling the turn
            run.cancel()
            return
        run.resolve_permission(event.request_id, option)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None or session.run is None:
            return
        for task in list(session.asks):
            task.cancel()
        session.run.cancel()

    async def _update(self, session_id: str, update: Any) -> None:
        assert self.client is not None
        try:
            await self.client.session_update(session_id=session_id, update=update)
        except ConnectionError:  # the client has gone: the run goes on to its end (cancelled by aclose)
            log.debug("dropped an update for %s: the connection is closed", session_id)

    async def aclose(self, grace: float = 3.0) -> None:
        """The client has gone: cancel every live run and give it `grace` seconds to write its session."""
        live = [s.run for s in self.sessions.values() if s.run is not None and not s.run.done]
        for run in live:
            run.cancel()
        if live:
            await asyncio.wait([asyncio.ensure_future(run.result()) for run in live], timeout=grace)
        if self._extensions is not None:
            await self._extensions.aclose()  # stops the MCP servers
        await self.providers.aclose()
        aclose = getattr(self.store, "aclose", None)
        if aclose is not None:
            await aclose()


def _internal(exc: KgentError) -> RequestError:
    return RequestError.internal_error({"code": exc.code, "message": exc.message})
