"""KgentAgent: the SDK's `Agent` over the shared service (kgent.service) — sessions in the fronts' common store, a
prompt is one run of the service (its guards: busy session, limits, provider and key check, extensions) whose events
stream as `session/update`s and whose permission prompts become `session/request_permission` (kgent.acp.port).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from acp import Client, RequestError
from acp import helpers as H
from acp import schema as S

from kgent.acp.mcp import session_servers
from kgent.config import provider_config
from kgent.core.errors import KgentError
from kgent.core.events import (
    MessageDelta,
    PlanEvent,
    RunEnd,
    RunResult,
    ToolCallEvent,
    ToolUpdate,
    UsageEvent,
)
from kgent.core.messages import Message
from kgent.core.modes import MODES as MODE_IDS
from kgent.files.ops import FileOps, LocalFileOps
from kgent.service import wire as W
from kgent.service.commands import builtin, invocation
from kgent.service.errors import classify
from kgent.service.handshake import Settings
from kgent.service.review import gated
from kgent.service.service import Service
from kgent.service.usage import context_at_rest, stored_usage, with_stored_images
from kgent.session.entries import SessionTree
from kgent.session.paths import normalize_workspace
from kgent.tools.base import CommandRunner

from . import setup
from . import updates as U
from .commands import available_commands
from .files import client_file_ops
from .guard import DELETE_EXTENSION
from .handshake import (
    API_KEY_AUTH,
    AUTH_REQUIRED,
    ClientOffer,
    EarlySessions,
    auth_problem,
    initialize_result,
)
from .live import LiveOutput
from .options import client_kind
from .port import AcpPort, Turn
from .setup import LASTING, Lasting
from .terminal import ClientTerminalRunner

log = logging.getLogger("kgent.acp")

MODES = tuple(S.SessionMode.model_validate(mode) for mode in setup.modes())
_DIFF_LIMIT = 1 << 20  # bytes: larger files are not sent as diffs
COMMANDS_POLL = (
    1.0  # seconds between two looks at each open session's slash commands (a template added or removed)
)


class _Session:
    def __init__(self, workspace: str, mode: str) -> None:
        self.workspace = workspace
        self.mode = mode
        self.model: str | None = None  # chosen with session/set_config_option; None: the environment's
        self.lasting: Lasting = "session"  # how long an 'always' answer lasts (the `lasting` config option)
        self.before: dict[
            str, tuple[str, str | None]
        ] = {}  # tool call id → (absolute path, text before the edit)
        self.terminals: dict[str, str] = {}  # tool call id → the client's terminal running its command
        self.titles: dict[str, str] = {}  # tool call id → the title it was announced with (this turn)
        self.commands: S.AvailableCommandsUpdate | None = None  # the slash commands the client was last sent


async def _read_text(fs: FileOps, workspace: str, path: str) -> str | None:
    """A file's text as the tools see it (through the client's buffers when it serves them), for the diff of an edit
    the person approved, through the files gate (inside the workspace only); None if absent or refused."""
    fs = gated(fs, Path(workspace))
    try:
        if await fs.size(Path(path)) > _DIFF_LIMIT:
            return None
        return (await fs.read_bytes(Path(path))).decode("utf-8", "replace")
    except OSError:
        return None


def request_error(exc: BaseException) -> RequestError:
    """The ACP error for anything the service raised: its message readable as it is (clients show `message`), its
    stable name in `data.code`; a missing key is ACP's `auth_required`."""
    err = classify(exc)
    if err.name == "missing_api_key":
        return auth_required(err.message)
    return RequestError(err.code, err.message, err.data())


def auth_required(problem: str) -> RequestError:
    """ACP's `auth_required`, saying what to set."""
    return RequestError(AUTH_REQUIRED, f"Authentication required: {problem}", {"message": problem})


def failure_error(result: RunResult) -> RequestError:
    """A failed run (a provider error, say) as the prompt's error: the reason in the message, not only in data."""
    error = result.error or {"code": "failed", "message": "the run failed"}
    name, message = error.get("code", "failed"), error.get("message") or "the run failed"
    return RequestError(-32005, f"The run failed: {message}", {"code": name, "message": message})


class KgentAgent:
    """One ACP connection. Requests for different sessions run concurrently; one prompt at a time per session."""

    def __init__(
        self, env: Mapping[str, str], offer: ClientOffer | None = None, early: EarlySessions | None = None
    ) -> None:
        self.env = env
        # what the client offered in `initialize` (kgent.acp.handshake may have answered it before we existed)
        self.offer = offer or ClientOffer()
        self.early = early or EarlySessions()  # sessions handshake made before we existed
        self.client: Client | None = None
        self.sessions: dict[str, _Session] = {}
        self.port = AcpPort(
            lambda: self.client,
            lambda sid: self.sessions[sid].workspace,
            self._lasting,
            lambda: client_kind(self.offer.name, self.env),
        )
        # No approval timeout: the client owns its permission prompts (and cancels the turn to give up).
        self.svc = Service(env, Settings(approval_timeout=None, approval_timeout_set=True), self.port)
        self.store = self.svc.store
        self._announcing: set[asyncio.Task[None]] = set()
        self._watch: asyncio.Task[None] | None = None

    def on_connect(self, conn: Client) -> None:
        self.client = conn
        self.early.attach(self._adopt)

    def _adopt(self, session_id: str, workspace: str) -> None:
        """A session kgent.acp.handshake made for `session/new` before the SDK had loaded, as new_session would have
        left it (no MCP servers of its own: those go to new_session)."""
        self.sessions[session_id] = _Session(workspace, self._default_mode())
        self._announce_commands(session_id, workspace)

    # -- handshake ------------------------------------------------------------------------------------------------
    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any
    ) -> S.InitializeResponse:
        """An `initialize` the stdlib handshake left to the SDK (kgent.acp.handshake answers the usual ones)."""
        if isinstance(client_capabilities, S.ClientCapabilities):
            self.offer.take(client_capabilities.model_dump(by_alias=True))
        self.offer.named(client_info.model_dump() if isinstance(client_info, S.Implementation) else None)
        return S.InitializeResponse.model_validate(initialize_result(protocol_version))

    async def authenticate(self, method_id: str, **kwargs: Any) -> S.AuthenticateResponse | None:
        """What kgent.acp.handshake answers before the SDK has loaded, for an `authenticate` that came after."""
        if method_id != API_KEY_AUTH["id"]:
            raise RequestError.invalid_params({"methodId": f"unknown auth method {method_id!r}"})
        problem = auth_problem(self.env)
        if problem is not None:
            raise auth_required(problem)
        return S.AuthenticateResponse()

    # -- sessions -------------------------------------------------------------------------------------------------
    def _modes(self, current: str) -> S.SessionModeState:
        return S.SessionModeState.model_validate(setup.mode_state(current))

    def _config_options(self, session: _Session) -> list[Any]:
        """The session's model and its mode (ACP: clients that support config options use only those; `modes`
        stays for older ones), and how long its 'always' answers last (kgent.acp.setup, shared with the early
        session/new)."""
        options = setup.config_options(self.env, session.mode, session.model, session.lasting)
        return [S.SessionConfigOptionSelect.model_validate(option) for option in options]

    def _lasting(self, session_id: str) -> Lasting:
        session = self.sessions.get(session_id)
        return session.lasting if session is not None else "session"

    def _default_mode(self) -> str:
        return setup.default_mode(self.env)

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> S.NewSessionResponse:
        servers = session_servers(mcp_servers)
        try:
            info = await self.store.create(workspace=normalize_workspace(cwd))
        except KgentError as exc:
            raise request_error(exc) from None
        self.svc.extensions().set_session_servers(info.id, servers)
        session = self.sessions[info.id] = _Session(info.workspace, self._default_mode())
        self._announce_commands(info.id, info.workspace)
        return S.NewSessionResponse(
            session_id=info.id, modes=self._modes(session.mode), config_options=self._config_options(session)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> S.LoadSessionResponse:
        """Replay the session's active branch as `session/update`s, then answer (ACP: the history comes first)."""
        from kgent.context.projection import project
        from kgent.tools import CODING_TOOLS

        tree, session = await self._reopen(session_id, mcp_servers)
        tools = {tool.name: tool for tool in CODING_TOOLS()}
        messages = project(tree.branch())
        filled = await with_stored_images(self.store, session_id, messages)
        for update in U.replay(filled or messages, tools, tree.info.workspace):
            await self._update(session_id, update)
        await self._usage_at_rest(session_id, tree, messages)
        self._announce_commands(session_id, tree.info.workspace)
        return S.LoadSessionResponse(
            modes=self._modes(session.mode), config_options=self._config_options(session)
        )

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> S.ForkSessionResponse:
        """ACP's session/fork (unstable): a new session holding this one's conversation (its active branch, its
        images); the original stays as it was. The fork starts with the original's mode and model on this
        connection. Nothing is replayed: the client has the history already."""
        servers = session_servers(mcp_servers)
        source = await self._session(session_id)
        try:
            new_id = await self.svc.copy_session(session_id, cwd)
        except KgentError as exc:
            raise request_error(exc) from None
        self.svc.extensions().set_session_servers(new_id, servers)
        fork = self.sessions[new_id] = _Session(normalize_workspace(cwd), source.mode)
        fork.model, fork.lasting = source.model, source.lasting
        self._announce_commands(new_id, fork.workspace)
        return S.ForkSessionResponse(
            session_id=new_id, modes=self._modes(fork.mode), config_options=self._config_options(fork)
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> S.ResumeSessionResponse:
        """ACP's session/resume (unstable): session/load without the replay (the client kept the history)."""
        from kgent.context.projection import project

        tree, session = await self._reopen(session_id, mcp_servers)
        await self._usage_at_rest(session_id, tree, project(tree.branch()))
        self._announce_commands(session_id, tree.info.workspace)
        return S.ResumeSessionResponse(
            modes=self._modes(session.mode), config_options=self._config_options(session)
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> S.CloseSessionResponse:
        """ACP's session/close (unstable): a live prompt of the session is cancelled, and the connection forgets
        its mode and model. The session stays in the store (session/load opens it again)."""
        await self._session(session_id)  # an unknown session is -32002
        run_id = self.svc.live_run_id(session_id)
        if run_id is not None:
            self.svc.cancel(run_id)
        self.sessions.pop(session_id, None)
        return S.CloseSessionResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """ACP's session/delete (unstable; kgent.acp.guard passes it on as `_kgent/session/delete`, as the SDK does
        not route it): the session leaves the store — a live prompt of it is refused as busy, not cancelled."""
        if method != DELETE_EXTENSION:
            raise RequestError.method_not_found("_" + method)
        session_id = params.get("sessionId")
        if not isinstance(session_id, str) or not session_id:
            raise RequestError.invalid_params({"sessionId": "the session to delete is required"})
        try:
            await self.svc.delete_session(session_id)
        except KgentError as exc:
            raise request_error(exc) from None
        self.sessions.pop(session_id, None)
        return {}

    async def _reopen(self, session_id: str, mcp_servers: list[Any] | None) -> tuple[SessionTree, _Session]:
        """A stored session opened on this connection (session/load, session/resume): its tree, and its state here
        (kept when this connection has it already), with the client's MCP servers."""
        servers = session_servers(mcp_servers)
        tree = await self._load(session_id)
        self.svc.extensions().set_session_servers(session_id, servers)
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = _Session(tree.info.workspace, self._default_mode())
        return tree, session

    async def _usage_at_rest(self, session_id: str, tree: SessionTree, messages: list[Message]) -> None:
        """A `usage_update` for the branch's last model call that reported usage (as its `usage` event said): how
        full the context was when the session was left. Nothing for a session without one."""
        context = context_at_rest(messages, self.svc.kernel_config())
        if context is not None:
            await self._update(session_id, U.usage_update(context, self._session_cost(tree)))

    def _session_cost(self, tree: SessionTree) -> float | None:
        """What the session's stored turns cost (every branch); None when one of them has no price."""
        return U.wire_cost(stored_usage(tree, self.svc.prices()))

    def _announce_commands(self, session_id: str, workspace: str) -> None:
        """Send the workspace's slash commands once this request has answered (the client then knows the session),
        and from then on whenever they change (kgent.acp.agent.COMMANDS_POLL)."""
        task = asyncio.get_running_loop().create_task(
            self._send_commands(session_id, workspace, force=True), name=f"kgent-commands-{session_id}"
        )
        self._announcing.add(task)
        task.add_done_callback(self._announcing.discard)
        if self._watch is None:
            self._watch = asyncio.get_running_loop().create_task(
                self._watch_commands(), name="kgent-commands"
            )

    async def _send_commands(self, session_id: str, workspace: str, *, force: bool = False) -> None:
        """An `available_commands_update` when the session's commands differ from what the client was last sent
        (`force`: also when they do not, after session/new, load, resume and fork)."""
        try:
            update = available_commands(self.svc.commands(workspace))
        except OSError as exc:  # an unreadable prompts folder: the session works without commands
            log.warning("could not list the slash commands of %s: %s", session_id, exc)
            return
        session = self.sessions.get(session_id)
        if session is None or (not force and update == session.commands):
            return
        session.commands = update
        await self._update(session_id, update)

    async def _watch_commands(self) -> None:
        """Look at each open session's commands every COMMANDS_POLL seconds (a template added mid-session shows up
        in the client's menu without a new session)."""
        while True:
            await asyncio.sleep(COMMANDS_POLL)
            for session_id, session in list(self.sessions.items()):
                if session.commands is not None:
                    await self._send_commands(session_id, session.workspace)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> S.ListSessionsResponse:
        """The prompted sessions of one workspace (any front's), newest first as the store lists them, each with
        its title (the first line of its first prompt); no paging."""
        if cwd is None:
            raise RequestError.invalid_params({"cwd": "Kgent lists the sessions of one workspace: give cwd"})
        try:
            listed = await self.svc.sessions(cwd)
        except KgentError as exc:
            raise request_error(exc) from None
        return S.ListSessionsResponse(
            sessions=[
                S.SessionInfo(
                    session_id=i.session_id,
                    cwd=i.workspace,
                    title=i.title or "(untitled)",
                    updated_at=i.updated,
                )
                for i in listed.sessions
                if i.entry_count > 0
            ]
        )

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> S.SetSessionConfigOptionResponse:
        """`mode` and `model`: the session's, from its next prompt on (a live run keeps what it started with);
        `lasting`: the scope of the next 'always' answers."""
        session = await self._session(session_id)
        if config_id == "mode":
            self._check_mode(value)
            session.mode = str(value)
        elif config_id == "model":
            if not isinstance(value, str) or value not in setup.models(self.env):
                raise RequestError.invalid_params(
                    {"value": f"unknown model {value!r}; one of {setup.models(self.env)}"}
                )
            session.model = value
        elif config_id == "lasting":
            scopes = [value for value, _, _ in LASTING]
            if value not in scopes:
                raise RequestError.invalid_params({"value": f"unknown scope {value!r}; one of {scopes}"})
            session.lasting = "project" if value == "project" else "session"
        else:
            raise RequestError.invalid_params(
                {"configId": f"unknown option {config_id!r}; the options are 'mode', 'model' and 'lasting'"}
            )
        return S.SetSessionConfigOptionResponse(config_options=self._config_options(session))

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> S.SetSessionModeResponse:
        self._check_mode(mode_id)
        session = await self._session(session_id)
        session.mode = mode_id  # from the next prompt on: a live run keeps the mode it started with
        return S.SetSessionModeResponse()

    @staticmethod
    def _check_mode(mode_id: object) -> None:
        if mode_id not in MODE_IDS:
            raise RequestError.invalid_params(
                {"modeId": f"unknown mode {mode_id!r}; one of {sorted(MODE_IDS)}"}
            )

    async def _load(self, session_id: str) -> Any:
        try:
            return await self.store.load(session_id)
        except KgentError as exc:
            raise request_error(exc) from None

    async def _session(self, session_id: str) -> _Session:
        session = self.sessions.get(session_id)
        if (
            session is None
        ):  # a session of the store this connection has not loaded (e.g. from the stdio daemon)
            tree = await self._load(session_id)
            session = self.sessions[session_id] = _Session(tree.info.workspace, self._default_mode())
        return session

    # -- prompts --------------------------------------------------------------------------------------------------
    def _fs(self, session_id: str) -> FileOps:
        """The files as the session's runs see them (the client's buffers when it offers them): for diffs."""
        offer = self.offer
        if self.client is not None and (offer.fs_read or offer.fs_write):
            return client_file_ops(self.client, session_id, read=offer.fs_read, write=offer.fs_write)
        return LocalFileOps()

    def _runner(self, session_id: str) -> CommandRunner | None:
        """The client's terminal, when it offers one (commands then run there, asked)."""
        if self.client is not None and self.offer.terminal:
            return ClientTerminalRunner(self.client, session_id, self._terminal_opened(session_id))
        return None

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> S.PromptResponse:
        session = await self._session(session_id)
        offer = self.offer
        self.svc.settings = replace(self.svc.settings, fs_read=offer.fs_read, fs_write=offer.fs_write)
        blocks = U.prompt_blocks(prompt)
        call = invocation(blocks) if isinstance(blocks, str) else None
        own = builtin(call[0]) if call is not None else None
        if isinstance(blocks, str) and own is not None and own.action != "prompt":
            return await self._answer(session_id, session, blocks)
        params = {"prompt": blocks, "sessionId": session_id, "mode": session.mode}
        if session.model is not None:
            params["model"] = session.model
        spent = self._session_cost(await self._load(session_id))  # before the check: no await after it
        if session_id in self.port.turns:
            raise RequestError.invalid_request(
                {"message": f"session {session_id} already has a prompt running"}
            )
        turn = self.port.turns[session_id] = Turn()
        try:
            try:
                handle = await self.svc.start_run(W.RunParams.parse(params), runner=self._runner(session_id))
            except Exception as exc:
                raise request_error(exc) from None
            handle.start()
            result = await self._stream(session_id, session, turn, spent)
        finally:
            del self.port.turns[session_id]
        reason = U.stop_reason(result)
        if reason is None:
            raise failure_error(result)
        return S.PromptResponse(stop_reason=reason, usage=U.prompt_usage(result.usage))

    async def _answer(self, session_id: str, session: _Session, text: str) -> S.PromptResponse:
        """A prompt that is a command the server answers (agent/command: /help, /cost, /model, /mode) as the
        agent's message of a turn without a run; /mode and /model change the session's options (and say so with
        `current_mode_update` and `config_option_update`). /clear and /rewind are the client's: ACP says why not."""
        if session_id in self.port.turns:
            raise RequestError.invalid_request(
                {"message": f"session {session_id} already has a prompt running"}
            )
        try:
            answer = await self.svc.command(W.CommandParams.parse({"text": text, "sessionId": session_id}))
        except Exception as exc:
            raise request_error(exc) from None
        reply = answer.text
        if answer.action == "newSession":
            reply = (
                "Start a new session from your client (ACP's session/new): an agent cannot open one for it."
            )
        elif answer.action == "rewind":
            reply = "ACP has no rewind: `kgent` in an editor (VS Code, Neovim) or the web client rewinds a session."
        if answer.mode is not None and answer.mode != session.mode:
            session.mode = answer.mode
            await self._update(session_id, H.update_current_mode(answer.mode))
        if answer.model is not None and answer.model != (session.model or provider_config(self.env).model):
            if answer.model not in setup.models(self.env):
                raise RequestError.invalid_params(
                    {"model": f"unknown model {answer.model!r}; one of {setup.models(self.env)}"}
                )
            session.model = answer.model
        if answer.command in ("mode", "model"):
            await self._update(
                session_id,
                S.ConfigOptionUpdate(
                    session_update="config_option_update", config_options=self._config_options(session)
                ),
            )
        await self._update(session_id, H.update_agent_message_text(reply))
        return S.PromptResponse(stop_reason="end_turn")

    async def _stream(self, session_id: str, session: _Session, turn: Turn, spent: float | None) -> RunResult:
        """Send the turn's events as `session/update`s until its run_end; `spent`: what the session cost before it
        (None when some turn had no price), for the cost in `usage_update`."""
        fs = self._fs(session_id)
        live = LiveOutput(lambda call_id, text: self._update(session_id, U.live_output(call_id, text)))
        try:
            while True:
                event = await turn.queue.get()
                if isinstance(event, asyncio.Future):  # a prompt waits until what came before it is shown
                    if not event.done():
                        event.set_result(None)
                elif type(event) is MessageDelta:
                    chunk = (
                        H.update_agent_message_text if event.kind == "text" else H.update_agent_thought_text
                    )
                    await self._update(session_id, chunk(event.delta))
                elif isinstance(event, ToolCallEvent):
                    if event.kind in ("edit", "delete", "move") and event.path:
                        absolute = str(Path(session.workspace, event.path))
                        session.before[event.tool_call_id] = (
                            absolute,
                            await _read_text(fs, session.workspace, absolute),
                        )
                    session.titles[event.tool_call_id] = event.title
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
                    diff = await self._diff(fs, session, event)
                    title = session.titles.pop(event.tool_call_id, None)
                    await self._update(session_id, U.tool_call_update(event, diff, terminal, title))
                elif isinstance(event, PlanEvent):
                    await self._update(session_id, U.plan_update(event))
                elif isinstance(event, UsageEvent) and event.context is not None:
                    run_cost = U.wire_cost(event.total)
                    cost = None if spent is None or run_cost is None else spent + run_cost
                    await self._update(session_id, U.usage_update(event.context, cost))
                elif isinstance(event, RunEnd):
                    return event.result
        finally:
            live.close()
            session.before.clear()
            session.terminals.clear()
            session.titles.clear()

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
        new = await _read_text(fs, session.workspace, path)
        return H.tool_diff_content(path, new if new is not None else "", old)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        run_id = self.svc.live_run_id(session_id)
        if run_id is not None:
            self.svc.cancel(run_id)

    async def _update(self, session_id: str, update: Any) -> None:
        assert self.client is not None
        try:
            await self.client.session_update(session_id=session_id, update=update)
        except ConnectionError:  # the client has gone: the run goes on to its end (cancelled by aclose)
            log.debug("dropped an update for %s: the connection is closed", session_id)

    async def aclose(self, grace: float = 3.0) -> None:
        """The client has gone: cancel every live run and give it `grace` seconds to write its session."""
        if self._watch is not None:
            self._watch.cancel()
        await self.svc.close(grace)
