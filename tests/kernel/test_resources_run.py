"""Instructions and skills end to end: real files, a real provider over HTTP to the local model server, whose
recorded requests show what the model was told; sessions in JSONL files, resumed by a new kernel."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from kgent.core.events import Event, InstructionsEvent, PermissionRequest, RunResult
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.anthropic import AnthropicProvider
from kgent.providers.base import ProviderConfig
from kgent.providers.openai import OpenAIProvider
from kgent.providers.streaming import HTTPProvider
from kgent.session.jsonl import JsonlSessionStore
from kgent.testing import ModelServer

CLASSES: dict[str, type[HTTPProvider]] = {"openai": OpenAIProvider, "anthropic": AnthropicProvider}


@pytest.fixture
def server() -> Iterator[ModelServer]:
    s = ModelServer([[{"text": "done"}]]).start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "user-config"
    d.mkdir()
    monkeypatch.setenv("KGENT_CONFIG_DIR", str(d))
    return d


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    (w / "pkg").mkdir(parents=True)
    (w / "other").mkdir()
    (w / "AGENTS.md").write_text("ROOT RULE: run the tests.\n")
    (w / "pkg" / "AGENTS.md").write_text("PKG RULE: no globals in pkg.\n")
    (w / "pkg" / "mod.py").write_text("x = 1\n")
    (w / "other" / "x.txt").write_text("other\n")
    return w.resolve()


@pytest.fixture
async def kernel_for(server: ModelServer, tmp_path: Path) -> AsyncIterator[Any]:
    kernels: list[AgentKernel] = []

    def make(wire: str, mode: str = "auto", **config: Any) -> AgentKernel:
        provider = CLASSES[wire](
            ProviderConfig(
                provider=wire, base_url=server.base_url(wire), model="test-model", api_key="sk-test"
            )
        )
        kernel = AgentKernel(
            provider, store=JsonlSessionStore(tmp_path / "sessions"), config=KernelConfig(mode=mode, **config)
        )
        kernels.append(kernel)
        return kernel

    yield make
    for k in kernels:
        await k.aclose()


def texts(body: dict[str, Any]) -> str:
    """Everything a request says, as one string (system prompt, messages, tool results)."""
    return json.dumps(body, ensure_ascii=False)


async def drain(run: Any) -> tuple[list[Event], RunResult]:
    events = []
    async for e in run:
        if isinstance(e, PermissionRequest):
            run.resolve_permission(e.request_id, "reject_once")
        events.append(e)
    return events, await run.result()


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_a_nested_agents_md_reaches_the_request_only_once_a_file_under_it_is_touched(
    wire: str, server: ModelServer, kernel_for: Any, ws: Path, user_dir: Path
) -> None:
    (user_dir / "AGENTS.md").write_text("USER RULE: be brief.\n")
    server.script = [
        [{"tool": "read", "args": {"path": "other/x.txt"}}],
        [{"tool": "read", "args": {"path": "pkg/mod.py"}}],
        [{"text": "done"}],
    ]
    kernel = kernel_for(wire)
    events, result = await drain(kernel.create_run("look around", workspace=ws))
    assert result.status == "settled", result.error
    bodies = [texts(r.body) for r in server.requests]
    assert len(bodies) == 3
    for body in bodies:
        assert "ROOT RULE" in body and "USER RULE" in body
        assert body.index("USER RULE") < body.index("ROOT RULE") < body.index("look around")
    assert "PKG RULE" not in bodies[0] and "PKG RULE" not in bodies[1]
    assert "PKG RULE" in bodies[2]
    assert bodies[2].index("x = 1") < bodies[2].index("PKG RULE")  # after the result that touched pkg/
    loaded = [e for e in events if isinstance(e, InstructionsEvent)]
    assert [[(Path(f.path).name, f.source) for f in e.files] for e in loaded] == [
        [("AGENTS.md", "user"), ("AGENTS.md", "project")],
        [("AGENTS.md", "directory")],
    ]
    # the system prompt is the same bytes on every request
    system = [r.body.get("system") or r.body["messages"][0] for r in server.requests]
    assert all(s == system[0] for s in system)


async def test_a_resumed_session_sees_an_edited_agents_md(
    server: ModelServer, kernel_for: Any, ws: Path, user_dir: Path
) -> None:
    first = kernel_for("openai")
    _, result = await drain(first.create_run("hello", workspace=ws))
    assert "ROOT RULE: run the tests." in texts(server.requests[-1].body)
    await first.aclose()
    (ws / "AGENTS.md").write_text("ROOT RULE: run the tests twice.\n")
    second = kernel_for("openai")
    events, again = await drain(second.create_run("again", workspace=ws, session_id=result.session_id))
    assert again.status == "settled"
    body = server.requests[-1].body
    last_instructions = [m["content"] for m in body["messages"] if "<instructions>" in str(m.get("content"))]
    assert len(last_instructions) == 2  # what it was told first (the cached prefix), then the new text
    assert (
        "run the tests twice" in last_instructions[1] and "replaces the earlier one" in last_instructions[1]
    )
    [event] = [e for e in events if isinstance(e, InstructionsEvent)]
    assert event.files[0].change == "changed"
    # a third run with no edit records nothing new
    third = kernel_for("openai")
    events, _ = await drain(third.create_run("more", workspace=ws, session_id=result.session_id))
    assert not [e for e in events if isinstance(e, InstructionsEvent)]
    tree = await third.store.load(result.session_id)
    assert [e.type for e in tree.branch(tree.leaf_id)].count("instructions") == 2


async def test_without_instruction_files_nothing_is_added(
    server: ModelServer, kernel_for: Any, tmp_path: Path, user_dir: Path
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    events, _ = await drain(kernel_for("openai").create_run("hi", workspace=bare))
    assert not [e for e in events if isinstance(e, InstructionsEvent)]
    assert [m["role"] for m in server.requests[-1].body["messages"]] == ["system", "user"]


async def test_a_skill_is_listed_and_its_user_dir_file_read_unasked(
    server: ModelServer, kernel_for: Any, ws: Path, user_dir: Path
) -> None:
    skill = user_dir / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Draft release notes from the git log.\n---\n"
        "STEP ONE: run scripts/log.sh\n"
    )
    project_skill = ws / ".kgent" / "skills" / "deploy"
    project_skill.mkdir(parents=True)
    (project_skill / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: >\n  Deploy the app\n  to staging.\n---\nbody\n"
    )
    server.script = [
        [{"tool": "read", "args": {"path": str(skill / "SKILL.md")}}],
        [{"text": "done"}],
    ]
    events, result = await drain(kernel_for("openai", mode="ask").create_run("write notes", workspace=ws))
    assert result.status == "settled"
    system = server.requests[0].body["messages"][0]["content"]
    assert "- deploy: Deploy the app to staging." in system
    assert f"- release-notes: Draft release notes from the git log. ({skill / 'SKILL.md'})" in system
    assert not [e for e in events if isinstance(e, PermissionRequest)]  # a known resource: not asked
    assert "STEP ONE" in texts(server.requests[1].body)


async def test_other_outside_reads_still_ask(
    server: ModelServer, kernel_for: Any, ws: Path, user_dir: Path, tmp_path: Path
) -> None:
    (user_dir / "skills").mkdir()
    (user_dir / "notes.md").write_text("not a skill")
    server.script = [[{"tool": "read", "args": {"path": str(user_dir / "notes.md")}}], [{"text": "done"}]]
    events, _ = await drain(kernel_for("openai", mode="ask").create_run("read it", workspace=ws))
    assert [e for e in events if isinstance(e, PermissionRequest)]
    assert "not a skill" not in texts(server.requests[1].body)


async def test_resources_off_sends_none(
    server: ModelServer, kernel_for: Any, ws: Path, user_dir: Path
) -> None:
    await drain(kernel_for("openai", resources=False).create_run("hi", workspace=ws))
    assert "ROOT RULE" not in texts(server.requests[-1].body)
