"""Rules over ACP (`kgent acp` as a subprocess, the official SDK's client): a project's rule file decides calls
without a `session/request_permission`, and the options' names say the rule and the scope an answer creates."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from kgent_host import STATE_DIR, daemon_env
from test_e2e_acp import AGENT, Client

from kgent.core.paths import trust_file


def _env(tmp_path: Path, workspace: Path) -> dict[str, str]:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    trust_file({"KGENT_CONFIG_DIR": str(config)}).write_text(f'["{workspace}"]')
    return daemon_env(
        STATE_DIR, KGENT_MODEL="tool-loop", KGENT_PERMISSION_MODE="ask", KGENT_CONFIG_DIR=str(config)
    )


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sample.py").write_text("value = 1\nprint(value)\n")
    return ws.resolve()


async def test_a_project_rule_file_decides_over_acp(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    (workspace / ".kgent").mkdir()
    (workspace / ".kgent" / "config.toml").write_text(
        '[permissions]\nallow = ["edit(sample.py)", "bash(grep *)", "bash(python3 sample.py)"]\n'
    )
    client = Client()  # no answers: a permission request would wait forever
    async with spawn_agent_process(client, *AGENT, env=_env(tmp_path, workspace)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("Set value to 2")])
    assert done.stop_reason == "end_turn"
    assert client.asked == []
    assert (workspace / "sample.py").read_text() == "value = 2\nprint(value)\n"


async def test_the_option_names_say_the_rule_and_scope(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    client = Client(["allow_always", "allow_always"])
    async with spawn_agent_process(client, *AGENT, env=_env(tmp_path, workspace)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        [lasting] = [o for o in session.config_options or [] if o.id == "lasting"]
        assert lasting.current_value == "session" and [o.value for o in lasting.options] == [
            "session",
            "project",
        ]
        changed = await conn.set_config_option(
            config_id="lasting", session_id=session.session_id, value="project"
        )
        assert changed is not None
        assert [o.current_value for o in changed.config_options if o.id == "lasting"] == ["project"]
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("Set value to 2")])
        assert done.stop_reason == "end_turn"
        bash = client.asked[1]
        # one option per kind: the lasting ones for the session's `lasting` scope, named so
        assert [(o.option_id, o.kind, o.name) for o in bash.options] == [
            ("allow_once", "allow_once", "Allow once"),
            ("allow_always", "allow_always", "Always allow `grep …` and `python3 sample.py` in this project"),
            ("reject_once", "reject_once", "Reject"),
            (
                "reject_always",
                "reject_always",
                "Always reject `grep …` and `python3 sample.py` in this project",
            ),
        ]
        project = bash.options[1]
        assert project.field_meta == {
            "kgent": {
                "scope": "project",
                "rules": [
                    {"rule": "bash(grep *)", "text": "allow `grep` with any arguments in this project"},
                    {
                        "rule": "bash(python3 sample.py)",
                        "text": "allow `python3 sample.py` (exactly this command) in this project",
                    },
                ],
            }
        }
        assert bash.options[0].field_meta is None
        rules = tomllib.loads((workspace / ".kgent" / "config.toml").read_text())["permissions"]["allow"]
        assert rules == ["edit(sample.py)", "bash(grep *)", "bash(python3 sample.py)"]
        # a new session of the same project: nothing is asked
        (workspace / "sample.py").write_text("value = 1\nprint(value)\n")
        again = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=again.session_id, prompt=[text_block("Again")])
    assert done.stop_reason == "end_turn" and len(client.asked) == 2


async def test_always_answers_last_the_session_by_default(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    client = Client(["allow_always", "allow_always"])
    async with spawn_agent_process(client, *AGENT, env=_env(tmp_path, workspace)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("Set value to 2")])
        assert done.stop_reason == "end_turn"
        assert [o.name for o in client.asked[1].options][1] == (
            "Always allow `grep …` and `python3 sample.py` this session"
        )
        with pytest.raises(RequestError) as bad:
            await conn.set_config_option(config_id="lasting", session_id=session.session_id, value="forever")
        assert bad.value.code == -32602
    assert not (workspace / ".kgent" / "config.toml").exists()  # no project rule was written
