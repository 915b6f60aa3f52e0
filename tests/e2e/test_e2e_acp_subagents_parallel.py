"""Sub-agents side by side over ACP (issue 41, point 2): `kgent acp` as a subprocess over real pipes, driven by the
ACP SDK's client side, one model turn of three `task` calls. The client holds every `session/request_permission`
until all three are open at once (only three live sub-agents can ask together: no clock), sees each one's call
titled with its sub-agent's name and its own tool call id, and answers them concurrently, as ACP clients may."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp import schema as S
from kgent_host import STATE_DIR, daemon_env
from test_e2e_acp import AGENT, wait_for
from test_e2e_acp_terminal import TERMINAL, TerminalClient

from helpers import SUB_AGENTS, three_asking_sub_agents


class Held:
    """One open `session/request_permission`: what it asked, how many updates the client had seen then, and the
    answer the test gives."""

    def __init__(self, tool_call: S.ToolCallUpdate, seen: int) -> None:
        self.tool_call = tool_call
        self.seen = seen
        self.answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()


class HoldingClient(TerminalClient):
    """Records every update; holds every permission request until the test answers it (terminals, if offered at
    initialize, are real processes: TerminalClient)."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[Held] = []

    async def request_permission(
        self, options: list[S.PermissionOption], session_id: str, tool_call: S.ToolCallUpdate, **kwargs: Any
    ) -> S.RequestPermissionResponse:
        held = Held(tool_call, len(self.updates))
        self.held.append(held)
        option = await held.answer
        if option == "cancelled":
            return S.RequestPermissionResponse(outcome=S.DeniedOutcome(outcome="cancelled"))
        return S.RequestPermissionResponse(outcome=S.AllowedOutcome(outcome="selected", option_id=option))

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]


def output(update: S.ToolCallProgress) -> str:
    """A finished call's output: its text content, or `rawOutput` when a client terminal shows it."""
    if update.raw_output:
        return str(update.raw_output["output"])
    [text] = [c for c in update.content or [] if c.type == "content"]
    return str(text.content.text)


async def three_at_once(client: HoldingClient, workspace: Path, caps: S.ClientCapabilities | None) -> Any:
    """Prompt the three sub-agents' turn; once all three prompts are open, check them and answer all at once."""
    script = three_asking_sub_agents(workspace.parent / "three.json", "All three are done.")
    env = daemon_env(STATE_DIR, KGENT_MODEL=script, KGENT_PERMISSION_MODE="ask")
    async with spawn_agent_process(client, *AGENT, env=env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[text_block("three jobs")])
        )
        await wait_for(lambda: len(client.held) == 3 or turn.done(), within=60)
        assert len(client.held) == 3 and not turn.done()  # all three open together, none answered

        # each prompt's call is titled with its sub-agent's name, and has an id of its own
        titles = {h.tool_call.title: h for h in client.held}
        assert sorted(titles) == sorted(f"{n}: Run `python3 -c 'print(\"{n}\")'`" for n in SUB_AGENTS)
        ids = [h.tool_call.tool_call_id for h in client.held]
        # every sub-run's bash call is its `call_1_1`: ids are prefixed by the sub-run's
        assert len(set(ids)) == 3
        starts = {u.tool_call_id: u for u in client.of("tool_call")}
        for h in client.held:
            # announced (same id, same title) before its prompt
            shown = client.updates[: h.seen]
            assert any(
                u.session_update == "tool_call" and u.tool_call_id == h.tool_call.tool_call_id for u in shown
            )
            assert starts[h.tool_call.tool_call_id].title == h.tool_call.title
            assert starts[h.tool_call.tool_call_id].kind == "execute"
        # the second sub-agent's prompt says it is Beta's
        task_ids = [u.tool_call_id for u in client.of("tool_call") if u.title.startswith("Sub-agent: ")]
        assert [starts[t].title for t in task_ids] == [f"Sub-agent: {n}" for n in SUB_AGENTS]
        beta = titles["Beta: Run `python3 -c 'print(\"Beta\")'`"]
        assert beta.tool_call.raw_input == {"command": "python3 -c 'print(\"Beta\")'"}

        for h in client.held:  # answered together, in the same instant
            h.answer.set_result("allow_once")
        done = await asyncio.wait_for(turn, 60)
        await client.close()
    assert done.stop_reason == "end_turn"
    # every sub-agent's command ran and its call completed; the task calls end with the answers in call order
    ends = {u.tool_call_id: u for u in client.of("tool_call_update") if u.status == "completed"}
    for h in client.held:
        name = h.tool_call.title.split(":")[0]
        assert output(ends[h.tool_call.tool_call_id]).splitlines()[0] == name
    answers = [output(ends[t]) for t in task_ids]
    assert answers == [f"{n} is done." for n in SUB_AGENTS]
    # each sub-agent's streamed text is the live content of its own task call, never another's
    for task_id, name in zip(task_ids, SUB_AGENTS, strict=True):
        live = [
            u.content[0].content.text
            for u in client.of("tool_call_update")
            if u.tool_call_id == task_id and u.status == "in_progress" and u.content
        ]
        assert live and all(f"{name} is done.".startswith(text) for text in live), live
    assert client.text() == "All three are done."
    return client


async def test_three_sub_agents_prompts_are_open_at_once_each_named_and_answered_together(
    workspace: Path,
) -> None:
    await three_at_once(HoldingClient(), workspace, None)


async def test_three_sub_agents_commands_run_in_three_client_terminals_each_embedded_in_its_call(
    workspace: Path,
) -> None:
    client = await three_at_once(HoldingClient(), workspace, TERMINAL)
    # three terminals, one per sub-agent's command, each embedded in that sub-agent's own call
    assert sorted(args[1] for _, args, _ in client.commands) == sorted(
        f"python3 -c 'print(\"{n}\")'" for n in SUB_AGENTS
    )
    embedded = {
        u.tool_call_id: c.terminal_id
        for u in client.of("tool_call_update")
        for c in u.content or []
        if c.type == "terminal"
    }
    held = {h.tool_call.tool_call_id: h.tool_call.title.split(":")[0] for h in client.held}
    assert set(embedded) == set(held) and len(set(embedded.values())) == 3
    for call_id, terminal_id in embedded.items():
        assert client.terminals[terminal_id].output.decode().strip() == held[call_id]
    assert all(t.released for t in client.terminals.values())


async def test_cancelling_the_turn_with_three_prompts_open_ends_it_cancelled(workspace: Path) -> None:
    client = HoldingClient()
    script = three_asking_sub_agents(workspace.parent / "three.json")
    env = daemon_env(STATE_DIR, KGENT_MODEL=script, KGENT_PERMISSION_MODE="ask")
    async with spawn_agent_process(client, *AGENT, env=env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[text_block("three jobs")])
        )
        await wait_for(lambda: len(client.held) == 3 or turn.done(), within=60)
        assert len(client.held) == 3 and not turn.done()
        await conn.cancel(session_id=session.session_id)
        for h in client.held:  # ACP: the client answers its pending requests `cancelled`
            h.answer.set_result("cancelled")
        done = await asyncio.wait_for(turn, 60)
    assert done.stop_reason == "cancelled"
    # no sub-agent's command ran: each of their calls, and each task call, ends failed, said cancelled
    ends = {u.tool_call_id: u for u in client.of("tool_call_update") if u.status in ("completed", "failed")}
    starts = client.of("tool_call")
    assert len(starts) == 6 and all(ends[s.tool_call_id].status == "failed" for s in starts)
    assert all(ends[s.tool_call_id].title == f"{s.title} · cancelled" for s in starts)
