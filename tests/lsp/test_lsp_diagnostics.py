"""Diagnostics after edits from a language server Kgent runs itself (`ruff server`, installed by make): a scripted
edit that introduces an undefined name gets the diagnostic in its tool result and its tool_update; the edit that
fixes it reports none; a server that never answers costs the bounded wait once, noted once; the project's servers
wait for trust; servers stop with the session."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import collect, processes_with
from kgent.core.events import ToolUpdate
from kgent.core.paths import user_config_dir
from kgent.ext.trust import set_trusted
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider

RUFF = str(Path(sys.executable).with_name("ruff"))
BROKEN = {"path": "app.py", "oldText": "print(value)", "newText": "print(valu)"}
FIXED = {"path": "app.py", "oldText": "print(valu)", "newText": "print(value)"}


def _configure(where: Path, command: list[str], timeout: float = 20) -> None:
    where.mkdir(parents=True, exist_ok=True)
    argv = ", ".join(f'"{c}"' for c in command)
    (where / "config.toml").write_text(
        f'[language_servers.ruff]\ncommand = [{argv}]\nfiles = ["*.py"]\nlanguage = "python"\ntimeout = {timeout}\n'
    )


def _kernel(*edits: dict[str, Any]) -> AgentKernel:
    turns = [[{"tool": "edit", "args": e, "id": f"call_{i}"}] for i, e in enumerate(edits)]
    return AgentKernel(ScriptedProvider([*turns, [{"text": "done"}]]), config=KernelConfig(mode="auto"))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "app.py").write_text("value = 1\nprint(value)\n")
    return (tmp_path / "ws").resolve()


def _finished(events: list[Any]) -> list[ToolUpdate]:
    return [e for e in events if isinstance(e, ToolUpdate) and e.status in ("completed", "failed")]


async def test_an_undefined_name_comes_back_in_the_result_and_the_fix_reports_none(ws: Path) -> None:
    _configure(user_config_dir(), [RUFF, "server"])
    kernel = _kernel(BROKEN, FIXED)
    run = kernel.create_run("break it, then fix it", workspace=ws)
    events = await collect(run)
    result = await run.result()
    await kernel.aclose()
    broken, fixed = _finished(events)
    assert "New diagnostics after this change (1 error):" in (broken.output or "")
    assert "app.py:2:7: error F821 Undefined name `valu`" in (broken.output or "")
    assert broken.diagnostics is not None and [d.code for d in broken.diagnostics] == ["F821"]
    assert broken.diagnostics[0].to_dict() == {
        "path": "app.py",
        "line": 2,
        "column": 7,
        "severity": "error",
        "message": "Undefined name `valu`",
        "source": "Ruff",
        "code": "F821",
    }
    assert fixed.diagnostics == () and "diagnostics" not in (fixed.output or "").lower()
    assert result.status == "settled"


async def test_what_was_there_before_the_edit_is_not_new(ws: Path) -> None:
    (ws / "app.py").write_text("import os\nvalue = 1\nprint(value)\n")  # F401 before any change
    _configure(user_config_dir(), [RUFF, "server"])
    kernel = _kernel(BROKEN)
    events = await collect(kernel.create_run("break it", workspace=ws))
    await kernel.aclose()
    (broken,) = _finished(events)
    assert broken.diagnostics is not None and [d.code for d in broken.diagnostics] == ["F821"]


async def test_a_server_that_never_answers_costs_the_wait_once(ws: Path) -> None:
    _configure(user_config_dir(), ["sleep", "1000"], timeout=0.5)
    kernel = _kernel(BROKEN, FIXED, BROKEN)
    events = await collect(kernel.create_run("three edits", workspace=ws))
    await kernel.aclose()
    first, second, third = _finished(events)
    note = "the language server `ruff` did not answer within 0.5 s; no diagnostics from it for the rest of this session"
    assert (first.output or "").count(note) == 1
    assert note not in (second.output or "") and note not in (third.output or "")
    assert (first.status, second.status, third.status) == ("completed",) * 3
    assert second.diagnostics is None and third.diagnostics is None  # not asked again: no second wait


async def test_a_missing_program_is_noted_once(ws: Path) -> None:
    _configure(user_config_dir(), ["no-such-language-server-here"])
    kernel = _kernel(BROKEN, FIXED)
    events = await collect(kernel.create_run("two edits", workspace=ws))
    await kernel.aclose()
    first, second = _finished(events)
    assert "`no-such-language-server-here` is not on PATH" in (first.output or "")
    assert "language server" not in (second.output or "")


async def test_the_projects_servers_wait_for_trust(ws: Path) -> None:
    _configure(ws / ".kgent", [RUFF, "server"])
    kernel = _kernel(BROKEN)
    events = await collect(kernel.create_run("break it", workspace=ws))
    (untrusted,) = _finished(events)
    assert "the project's language servers (`ruff`) run once the project is trusted" in (
        untrusted.output or ""
    )
    assert untrusted.diagnostics is None
    set_trusted(ws, True)
    (ws / "app.py").write_text("value = 1\nprint(value)\n")
    events = await collect(kernel.create_run("break it again", workspace=ws))
    await kernel.aclose()
    (trusted,) = _finished(events)
    assert trusted.diagnostics is not None and [d.code for d in trusted.diagnostics] == ["F821"]


async def test_the_server_stops_with_the_session(ws: Path) -> None:
    _configure(user_config_dir(), [RUFF, "server"])
    kernel = _kernel(BROKEN)
    workspace = ws
    run = kernel.create_run("break it", workspace=workspace)
    servers = kernel.language_servers(run.session_id, workspace)
    assert servers is not None
    await collect(run)
    await run.result()
    await kernel.aclose()  # awaits the stop that the session's end began
    assert kernel.language_servers(run.session_id, workspace) is not servers  # forgotten with the session
    assert servers.running() == {}
    assert not processes_with(str(workspace))  # the sandbox around it names the workspace


async def test_a_command_that_changes_a_checked_file_reports_what_it_broke(ws: Path) -> None:
    _configure(user_config_dir(), [RUFF, "server"])
    turns = [
        [
            {
                "tool": "edit",
                "args": {"path": "app.py", "oldText": "value = 1", "newText": "value = 2"},
                "id": "e",
            }
        ],
        [{"tool": "bash", "args": {"command": "sed -i 's/(value)/(valu)/' app.py"}, "id": "b1"}],
        [{"tool": "bash", "args": {"command": "true"}, "id": "b2"}],
        [{"text": "done"}],
    ]
    kernel = AgentKernel(ScriptedProvider(turns), config=KernelConfig(mode="full"))
    events = await collect(kernel.create_run("edit, then break it with a command", workspace=ws))
    await kernel.aclose()
    edit, broke, idle = _finished(events)
    assert edit.diagnostics == ()
    assert broke.diagnostics is not None and [d.code for d in broke.diagnostics] == ["F821"]
    assert "app.py:2:7: error F821 Undefined name `valu`" in (broke.output or "")
    assert idle.diagnostics is None  # it changed no checked file: nothing asked
