"""Slash commands over ACP, driven by the ACP Python SDK's client against `kgent acp` as a subprocess: the
workspace's commands arrive as `available_commands_update` after session/new and session/load, and a prompt that
starts with one runs its expansion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import text_block
from test_e2e_acp import Client, agent, wait_for


def commands_of(client: Client) -> dict[str, Any]:
    updates = [u for u in client.updates if u.session_update == "available_commands_update"]
    return {c.name: c for c in updates[-1].available_commands} if updates else {}


async def test_commands_are_advertised_and_a_template_runs(workspace: Path, tmp_path: Path) -> None:
    prompts = workspace / ".kgent" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "explain.md").write_text(
        "---\ndescription: Explain a file\nargument-hint: <path>\n---\nExplain $1 in two sentences.\n"
    )
    config = tmp_path / "config"
    (config / "prompts").mkdir(parents=True)
    (config / "prompts" / "standup.md").write_text("Write my stand-up from $ARGUMENTS.\n")
    client = Client()
    async with agent(client, KGENT_CONFIG_DIR=str(config)) as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await wait_for(lambda: commands_of(client))
        listed = commands_of(client)
        assert {"compact", "init", "review", "explain", "standup"} <= set(listed)
        assert (
            listed["explain"].description == "Explain a file (project)"
        )  # the menu's text: where it comes from
        assert listed["explain"].input is not None and listed["explain"].input.root.hint == "<path>"
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("/explain a.py")])
        assert done.stop_reason == "end_turn"
    again = Client()
    async with agent(again, KGENT_CONFIG_DIR=str(config)) as conn:
        await conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[])
        await wait_for(lambda: commands_of(again))  # after session/load too
        assert "explain" in commands_of(again)
    # the replayed history shows what the model was sent: the expansion
    assert again.text("user_message_chunk") == "Explain a.py in two sentences.\n"


async def test_a_template_added_mid_session_is_announced(workspace: Path) -> None:
    client = Client()
    async with agent(client) as conn:
        await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await wait_for(lambda: commands_of(client))
        assert "explain" not in commands_of(client)
        prompts = workspace / ".kgent" / "prompts"
        prompts.mkdir(parents=True)
        draft = workspace / "explain.md"  # written whole, then moved in: the poll never sees half a file
        draft.write_text("---\ndescription: Explain a file\n---\nExplain $1.\n")
        draft.rename(prompts / "explain.md")
        await wait_for(lambda: "explain" in commands_of(client))
        (prompts / "explain.md").unlink()
        await wait_for(lambda: "explain" not in commands_of(client))
    announced = [u for u in client.updates if u.session_update == "available_commands_update"]
    assert len(announced) == 3  # at session/new, then once per change: none while nothing changed


async def test_the_server_answers_help_cost_mode_and_model(workspace: Path) -> None:
    client = Client()
    async with agent(client) as conn:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await wait_for(lambda: commands_of(client))
        listed = commands_of(client)
        assert {"help", "cost", "mode", "model"} <= set(listed)
        assert (
            "clear" not in listed and "rewind" not in listed
        )  # the client's own: an ACP agent cannot do them
        assert (
            listed["mode"].input is not None
            and listed["mode"].input.root.hint == "[plan|ask|auto|full|risk_based]"
        )

        async def say(text: str) -> str:
            client.updates.clear()
            done = await conn.prompt(session_id=sid, prompt=[text_block(text)])
            assert done.stop_reason == "end_turn"
            return client.text()

        assert "/cost — Show the tokens" in await say("/help")
        assert (await say("/cost")).startswith("This session so far: 0 in / 0 out tokens")
        await say("Hello")  # a real turn: the next /cost counts it
        spent = await say("/cost")
        assert spent.startswith("This session so far: ") and "0 in / 0 out" not in spent
        answer = await say("/mode plan")
        assert answer.startswith("Mode for this session's next runs: plan")
        kinds = [u.session_update for u in client.updates]
        assert "current_mode_update" in kinds and "config_option_update" in kinds
        [mode] = [u for u in client.updates if u.session_update == "current_mode_update"]
        assert mode.current_mode_id == "plan"
        assert "Model for this session's next runs: review-edits" in await say("/model review-edits")
        [options] = [u for u in client.updates if u.session_update == "config_option_update"]
        current = {o.root.id if hasattr(o, "root") else o.id: o for o in options.config_options}
        model = current["model"]
        assert getattr(model, "root", model).current_value == "review-edits"
        assert "session/new" in await say("/clear")
