"""`kgent acp` as a subprocess over real pipes, driven by the ACP Python SDK's client side (scripted provider)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp import schema as S
from kgent_host import STATE_DIR, daemon_env

from kgent.testing.daemon_client import DaemonClient

AGENT = [sys.executable, "-m", "kgent", "acp"]


class Client:
    """An ACP client: records every update, answers permission requests from `answers` (or waits, if empty)."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.updates: list[Any] = []
        self.answers = list(answers or [])
        self.asked: list[S.RequestPermissionRequest] = []
        self.waiting: asyncio.Future[str] | None = None  # an unanswered prompt, resolved by the test

    async def request_permission(
        self, options: list[S.PermissionOption], session_id: str, tool_call: S.ToolCallUpdate, **kwargs: Any
    ) -> S.RequestPermissionResponse:
        self.asked.append(
            S.RequestPermissionRequest(session_id=session_id, tool_call=tool_call, options=options)
        )
        if self.answers:
            option = self.answers.pop(0)
        else:
            self.waiting = asyncio.get_running_loop().create_future()
            option = await self.waiting
        if option == "cancelled":
            return S.RequestPermissionResponse(outcome=S.DeniedOutcome(outcome="cancelled"))
        return S.RequestPermissionResponse(outcome=S.AllowedOutcome(outcome="selected", option_id=option))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    def kinds(self) -> list[str]:
        return [u.session_update for u in self.updates]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.updates if u.session_update == kind)


@asynccontextmanager
async def agent(client: Client, script: str = "hello", **env: str) -> AsyncIterator[Any]:
    async with spawn_agent_process(client, *AGENT, env=daemon_env(STATE_DIR, KGENT_MODEL=script, **env)) as (
        conn,
        _,
    ):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        yield conn


async def wait_for(predicate: Any, within: float = 30.0) -> None:
    for _ in range(int(within / 0.02)):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("timed out waiting")


def option_of(response: Any, option_id: str) -> Any:
    [option] = [o for o in response.config_options or [] if o.id == option_id]
    return option


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


async def test_initialize_answers_capabilities_modes_and_auth() -> None:
    async with spawn_agent_process(Client(), *AGENT, env=daemon_env(STATE_DIR)) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert init.protocol_version == PROTOCOL_VERSION
    caps = init.agent_capabilities
    assert caps is not None and caps.load_session and caps.prompt_capabilities is not None
    assert caps.prompt_capabilities.embedded_context
    assert [m.id for m in init.auth_methods or []] == ["api-key"]


async def test_prompt_streams_then_ends_the_turn(workspace: Path) -> None:
    client = Client()
    async with agent(client) as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert session.modes is not None and [m.id for m in session.modes.available_modes] == [
            "plan",
            "ask",
            "auto",
            "full",
            "risk_based",
        ]
        link = S.ResourceContentBlock(type="resource_link", uri=f"file://{workspace}/a.py", name="a.py")
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi"), link])
        listed = await conn.list_sessions(cwd=str(workspace))
    assert done.stop_reason == "end_turn"
    assert [s.session_id for s in listed.sessions] == [session.session_id] and listed.sessions[0].cwd == str(
        workspace
    )
    assert client.text() == "Hello from the scripted provider. Nothing to do here."


async def test_session_new_is_answered_before_the_sdk_has_loaded_and_the_session_works(
    workspace: Path,
) -> None:
    """A client's `session/new` right after `initialize` is answered by the stdlib handshake while the SDK still
    loads (issue 37: the agent's log says so); the session then takes a prompt, gets its slash commands and is
    listed, as one the agent made itself would."""
    client = Client()
    env = daemon_env(STATE_DIR, KGENT_MODEL="hello", KGENT_LOG_LEVEL="DEBUG")
    async with spawn_agent_process(client, *AGENT, env=env) as (conn, proc):
        log: list[str] = []

        async def drain() -> None:
            assert proc.stderr is not None
            async for line in proc.stderr:
                log.append(line.decode(errors="replace"))

        draining = asyncio.get_running_loop().create_task(drain())
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        await wait_for(lambda: "available_commands_update" in client.kinds())
        listed = await conn.list_sessions(cwd=str(workspace))
        await wait_for(lambda: any(session.session_id in line for line in log))
        draining.cancel()
    early = [line for line in log if "session/new answered before the SDK loaded" in line]
    assert early and session.session_id in early[0], "".join(log)[-2000:]
    assert done.stop_reason == "end_turn"
    assert client.text() == "Hello from the scripted provider. Nothing to do here."
    assert [s.session_id for s in listed.sessions] == [session.session_id]


async def test_a_session_picks_its_model_from_the_config_options(workspace: Path) -> None:
    client = Client()
    async with agent(client, "two-writes") as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        option = option_of(session, "model")
        assert option.category == "model" and option.current_value == "two-writes"
        assert {"hello", "two-writes", "long-bash"} <= {o.value for o in option.options}
        with pytest.raises(RequestError) as unknown:
            await conn.set_config_option(
                config_id="model", session_id=session.session_id, value="gpt-nonexistent"
            )
        assert unknown.value.code == -32602
        changed = await conn.set_config_option(
            config_id="model", session_id=session.session_id, value="hello"
        )
        assert changed is not None and option_of(changed, "model").current_value == "hello"
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    assert done.stop_reason == "end_turn" and client.asked == []
    assert client.text() == "Hello from the scripted provider. Nothing to do here."


async def test_edits_ask_permission_stream_diffs_and_the_session_replays_in_a_new_process(
    workspace: Path,
) -> None:
    client = Client(["allow_once", "reject_once"])
    async with agent(client, "two-writes") as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("write notes")])
    assert done.stop_reason == "end_turn"
    assert (workspace / "notes.txt").read_text() == "first\n"  # the second write was rejected
    # one option per kind (clients key them by kind), "Allow once" first, also when sorted by name (avante)
    assert [(o.option_id, o.kind, o.name) for o in client.asked[0].options] == [
        ("allow_once", "allow_once", "Allow once"),
        ("allow_always", "allow_always", "Always allow writes to `notes.txt` this session"),
        ("reject_once", "reject_once", "Reject"),
        ("reject_always", "reject_always", "Always reject writes to `notes.txt` this session"),
    ]
    names = [o.name for o in client.asked[0].options]
    assert sorted(names) == [names[0], names[1], names[3], names[2]]
    starts = [u for u in client.updates if u.session_update == "tool_call"]
    assert starts[0].kind == "edit" and starts[0].locations[0].path == str(workspace / "notes.txt")
    assert client.asked[0].tool_call.tool_call_id == starts[0].tool_call_id
    ends = [
        u
        for u in client.updates
        if u.session_update == "tool_call_update" and u.status in ("completed", "failed")
    ]
    diff = ends[0].content[0]
    assert (
        ends[0].status == "completed"
        and diff.type == "diff"
        and diff.new_text == "first\n"
        and diff.old_text is None
    )
    assert ends[1].status == "failed"

    replayed = Client()
    async with agent(replayed) as conn:
        loaded = await conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
        assert loaded is not None and loaded.modes is not None
    assert replayed.text("user_message_chunk") == "write notes"
    assert replayed.text() == "Writing notes.txt.Wrote notes.txt twice."
    replayed_starts = [u for u in replayed.updates if u.session_update == "tool_call"]
    assert [u.tool_call_id for u in replayed_starts] == [s.tool_call_id for s in starts]
    assert [u.title for u in replayed_starts] == [s.title for s in starts] == ["Write notes.txt"] * 2


class EditorClient(Client):
    """A client that offers fs/*: it serves its buffers (unsaved text) and saves what the agent writes."""

    def __init__(self, answers: list[str], buffers: dict[str, str]) -> None:
        super().__init__(answers)
        self.buffers = buffers
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []

    async def read_text_file(self, path: str, session_id: str, **kwargs: Any) -> S.ReadTextFileResponse:
        self.reads.append(path)
        content = (
            self.buffers[path] if path in self.buffers else await asyncio.to_thread(Path(path).read_text)
        )
        return S.ReadTextFileResponse(content=content)

    async def write_text_file(
        self, content: str, path: str, session_id: str, **kwargs: Any
    ) -> S.WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        await asyncio.to_thread(Path(path).write_text, content)  # saved, as an editor does
        return S.WriteTextFileResponse()


async def test_reads_and_writes_go_through_the_clients_buffers_when_it_offers_fs(workspace: Path) -> None:
    notes = str(workspace / "notes.txt")
    (workspace / "notes.txt").write_text("on disk\n")
    client = EditorClient(["allow_once"], {notes: "unsaved in the editor\n"})
    caps = S.ClientCapabilities(fs=S.FileSystemCapabilities(read_text_file=True, write_text_file=True))
    async with spawn_agent_process(
        client, *AGENT, env=daemon_env(STATE_DIR, KGENT_MODEL="read-then-write")
    ) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("rewrite notes")])
    assert done.stop_reason == "end_turn"
    assert notes in client.reads and client.writes == [(notes, "rewritten\n")]
    read_result = next(
        u for u in client.updates if u.session_update == "tool_call_update" and u.status == "completed"
    )
    assert (
        "unsaved in the editor" in read_result.content[0].content.text
    )  # the model read the buffer, not the disk
    diff = next(
        c
        for u in client.updates
        if u.session_update == "tool_call_update"
        for c in u.content or []
        if c.type == "diff"
    )
    assert diff.old_text == "unsaved in the editor\n" and diff.new_text == "rewritten\n"


async def test_cancel_mid_command_ends_the_turn_cancelled(workspace: Path) -> None:
    client = Client()
    async with agent(client, "long-bash") as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="full")
        turn = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[text_block("run it")])
        )
        await wait_for(lambda: any(getattr(u, "status", None) == "in_progress" for u in client.updates))
        await conn.cancel(session_id=session.session_id)
        done = await turn
    assert done.stop_reason == "cancelled"
    assert client.asked == []  # full mode asks nothing
    assert_the_call_ends_cancelled(client)


def assert_the_call_ends_cancelled(client: Client) -> None:
    """The command's line ends `failed` (ACP has no cancelled status) with a title that says it was cancelled."""
    [start] = [u for u in client.updates if u.session_update == "tool_call"]
    [end] = [u for u in client.updates if u.session_update == "tool_call_update" and u.status == "failed"]
    assert end.tool_call_id == start.tool_call_id
    assert end.title == f"{start.title} · cancelled" and end.field_meta == {"kgent": {"cancelled": True}}


async def test_cancel_while_a_permission_is_pending(workspace: Path) -> None:
    client = Client()
    async with agent(client, "long-bash") as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[text_block("run it")])
        )
        await wait_for(lambda: client.waiting is not None)
        await conn.cancel(session_id=session.session_id)
        assert client.waiting is not None
        client.waiting.set_result("cancelled")  # ACP: the client answers its pending requests `cancelled`
        done = await turn
    assert done.stop_reason == "cancelled"
    assert client.asked[0].tool_call.kind == "execute"
    assert_the_call_ends_cancelled(client)


async def test_the_client_leaving_mid_command_cancels_the_run_and_keeps_the_session(workspace: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        *AGENT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=daemon_env(STATE_DIR, KGENT_MODEL="long-bash", KGENT_PERMISSION_MODE="full"),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def until(done: Any) -> dict[str, Any]:
        assert proc.stdout is not None
        while not done(message := json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))):
            pass
        return message

    send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    send({"id": 2, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}})
    session_id = (await until(lambda m: m.get("id") == 2))["result"]["sessionId"]
    send(
        {
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]},
        }
    )
    await until(lambda m: (m.get("params") or {}).get("update", {}).get("status") == "in_progress")
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    assert b"Traceback" not in await proc.stderr.read()

    replayed = Client()
    async with agent(replayed) as conn:
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
    assert replayed.text("user_message_chunk") == "go"
    assert [u.status for u in replayed.updates if u.session_update == "tool_call_update"] == ["failed"]


async def test_bad_requests_get_errors_and_the_agent_lives(workspace: Path) -> None:
    client = Client()
    async with agent(client) as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        with pytest.raises(RequestError) as bad_mode:
            await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        assert bad_mode.value.code == -32602
        with pytest.raises(RequestError) as missing:
            await conn.prompt(session_id="no-such-session", prompt=[text_block("hi")])
        assert missing.value.code == -32002
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert done.stop_reason == "end_turn"


HOSTILE = [
    b"\xff\xfe not utf-8",
    b"[]",
    b'[{"jsonrpc":"2.0","id":90,"method":"initialize","params":{"protocolVersion":1}}]',
    b"42",
    b'"a string"',
    b'{"jsonrpc":"2.0","id":91,"result":{}}',
    b'{"id":92}',
    b'{"jsonrpc":"2.0","id":93,"method":5}',
    b'{"jsonrpc":"2.0","id":{"x":1},"method":"initialize","params":{"protocolVersion":1}}',
    b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}',
    b'{"jsonrpc":"2.0","method":"session/cancel","params":null}',
    b'{"jsonrpc":"2.0","id":94,"method":"session/load","params":{"cwd":"/tmp","sessionId":"nope","mcpServers":[]}}',
    b"{" * 1000,
]


async def test_malformed_and_hostile_lines_get_json_rpc_errors_and_the_agent_lives() -> None:
    proc = await asyncio.create_subprocess_exec(
        *AGENT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=daemon_env(STATE_DIR),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines = [
        b"this is not json",
        b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":42}}',
        b'{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}',
        b'{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":[1,2]}',
        *HOSTILE,
        json.dumps(
            {"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": 1}}
        ).encode(),
    ]
    proc.stdin.write(b"\n".join(lines) + b"\n")
    await proc.stdin.drain()
    replies: list[Any] = []
    while not {4, 94} <= {r.get("id") for r in replies if isinstance(r.get("id"), int)}:
        replies.append(json.loads(await asyncio.wait_for(proc.stdout.readline(), 60)))
    by_id = {r["id"]: r for r in replies if isinstance(r.get("id"), int)}
    assert by_id[1]["error"]["code"] == -32602
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[3]["error"]["code"] in (-32602, -32600)
    assert by_id[94]["error"]["code"] == -32002
    assert by_id[4]["result"]["protocolVersion"] == 1
    unattributed = [r["error"]["code"] for r in replies if r.get("id") is None]
    assert unattributed.count(-32700) == 3  # not JSON, not UTF-8, the run of braces
    assert unattributed.count(-32600) == 4  # an empty batch, a batch, a number, a string
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    # The SDK logs the notification it could not validate (session/cancel with null params); none of ours fails.
    assert b"/kgent/" not in await proc.stderr.read()


async def test_a_session_moves_between_the_stdio_daemon_and_acp(workspace: Path) -> None:
    daemon = await DaemonClient.spawn(env=daemon_env(STATE_DIR))
    try:
        await daemon.request("initialize", {"protocolVersion": 1})
        ended = asyncio.get_running_loop().create_future()
        daemon.on_notification = lambda method, p: (
            ended.set_result(p) if p["event"]["type"] == "run_end" and not ended.done() else None
        )
        started = await daemon.request(
            "agent/run", {"prompt": "from the daemon", "workspace": str(workspace)}
        )
        await asyncio.wait_for(ended, 60)
    finally:
        await daemon.close()

    client = Client()
    async with agent(client) as conn:
        await conn.load_session(cwd=str(workspace), session_id=started["sessionId"], mcp_servers=[])
        assert client.text("user_message_chunk") == "from the daemon"
        done = await conn.prompt(session_id=started["sessionId"], prompt=[text_block("from acp")])
        assert done.stop_reason == "end_turn"

    daemon = await DaemonClient.spawn(env=daemon_env(STATE_DIR))
    try:
        await daemon.request("initialize", {"protocolVersion": 1})
        tree = await daemon.request("agent/session", {"sessionId": started["sessionId"]})
    finally:
        await daemon.close()
    texts = [e["message"]["text"] for e in tree["entries"] if e.get("message", {}).get("role") == "user"]
    assert texts == ["from the daemon", "from acp"]


async def test_todo_write_plans_become_plan_updates_and_replay(workspace: Path) -> None:
    (workspace / "sample.py").write_text("value = 1\nprint(value)\n")
    client = Client()
    async with agent(client, "plan") as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("what does it print?")])
    assert done.stop_reason == "end_turn" and client.asked == []
    plans = [u for u in client.updates if u.session_update == "plan"]
    assert [[(e.content, e.status, e.priority) for e in p.entries] for p in plans] == [
        [("Read sample.py", "in_progress", "high"), ("Explain what it prints", "pending", "medium")],
        [("Read sample.py", "completed", "high"), ("Explain what it prints", "in_progress", "medium")],
        [("Read sample.py", "completed", "high"), ("Explain what it prints", "completed", "medium")],
    ]
    replayed = Client()
    async with agent(replayed) as conn:
        await conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
    assert [u.entries for u in replayed.updates if u.session_update == "plan"] == [p.entries for p in plans]


async def test_a_sub_agents_calls_and_approval_reach_the_acp_client(workspace: Path) -> None:
    (workspace / "sample.py").write_text("value = 1\nprint(value)\n")
    client = Client(["allow_once"])
    async with agent(client, "task") as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("what does it print?")])
    assert done.stop_reason == "end_turn"
    [asked] = client.asked
    assert asked.tool_call.title == "Check sample.py: Run `python3 sample.py`"
    starts = [u for u in client.updates if u.session_update == "tool_call"]
    assert [s.title for s in starts] == [
        "Sub-agent: Check sample.py",
        "Check sample.py: Read sample.py",
        "Check sample.py: Run `python3 sample.py`",
    ]
    assert asked.tool_call.tool_call_id == starts[2].tool_call_id != starts[0].tool_call_id
    assert (
        client.text()
        == "I'll ask a sub-agent to check what sample.py prints.The sub-agent ran sample.py: it prints 1."
    )
    # the sub-agent's own text streams under its task call (live content of that call), not into the answer
    live = [
        u.content[0].content.text
        for u in client.updates
        if u.session_update == "tool_call_update"
        and u.tool_call_id == starts[0].tool_call_id
        and u.status == "in_progress"
        and u.content
    ]
    # each update the text so far (its turns apart), however the throttle picked them
    whole = "Reading it first.\n\nsample.py prints 1."
    assert live and all(whole.startswith(text) for text in live), live


# -- issue 29: what CodeCompanion, avante and Zed users hit ------------------------------------------------------------


async def test_the_mode_is_also_a_config_option_of_category_mode(workspace: Path) -> None:
    client = Client()
    async with agent(client, "two-writes") as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        mode = option_of(session, "mode")
        assert mode.category == "mode" and mode.current_value == "ask"
        assert [o.value for o in mode.options] == ["plan", "ask", "auto", "full", "risk_based"]
        assert session.modes is not None and session.modes.current_mode_id == "ask"  # kept for older clients
        changed = await conn.set_config_option(config_id="mode", session_id=session.session_id, value="full")
        assert changed is not None and option_of(changed, "mode").current_value == "full"
        with pytest.raises(RequestError) as bad:
            await conn.set_config_option(config_id="mode", session_id=session.session_id, value="yolo")
        assert bad.value.code == -32602
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("write notes")])
    assert done.stop_reason == "end_turn" and client.asked == []  # full mode asks nothing
    assert (workspace / "notes.txt").read_text() == "second\n"


async def test_a_provider_failure_is_an_error_a_person_can_read(workspace: Path) -> None:
    client = Client()
    async with agent(client, "provider-error") as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        with pytest.raises(RequestError) as failed:
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    assert "The scripted provider failed." in str(failed.value)  # the message, not only data
    assert str(failed.value) != "Internal error" and failed.value.code != -32603
    assert failed.value.data["code"] == "scripted_error"


async def test_authenticate_is_answered(workspace: Path) -> None:
    async with spawn_agent_process(Client(), *AGENT, env=daemon_env(STATE_DIR)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert await conn.authenticate(method_id="api-key") is not None  # the scripted provider needs no key
    keyless = daemon_env(STATE_DIR, KGENT_PROVIDER="openai")
    async with spawn_agent_process(Client(), *AGENT, env=keyless) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        with pytest.raises(RequestError) as missing:
            await conn.authenticate(method_id="api-key")
    assert missing.value.code == -32000 and "no API key" in str(missing.value)


async def test_session_list_shows_only_prompted_sessions_with_their_titles(workspace: Path) -> None:
    client = Client()
    async with agent(client) as conn:
        unused = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        used = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=used.session_id, prompt=[text_block("say hello\nplease")])
        listed = await conn.list_sessions(cwd=str(workspace))
    assert [(s.session_id, s.title) for s in listed.sessions] == [(used.session_id, "say hello")]
    assert unused.session_id not in {s.session_id for s in listed.sessions}
