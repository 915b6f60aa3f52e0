"""A defined sub-agent's `model` over real HTTP: the built-in providers, pointed at the local model server, send the
definition's model for the sub-run's requests on the parent's connection and key, and the parent's model for its
own; the sub-run's answers are recorded as that model's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import collect
from kgent.core.events import RunStart, SubRunEvent
from kgent.ext.trust import set_trusted
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.anthropic import AnthropicProvider
from kgent.providers.base import ProviderConfig
from kgent.providers.openai import OpenAIProvider
from kgent.providers.streaming import HTTPProvider
from kgent.testing import ModelServer

CLASSES: dict[str, type[HTTPProvider]] = {"openai": OpenAIProvider, "anthropic": AnthropicProvider}


@pytest.fixture
def server() -> Iterator[ModelServer]:
    # The server plays turns by the assistant messages since the last user text, the same for both runs: the
    # parent's first turn starts the sub-agent; the sub-agent's first turn (that same call) is a tool it does not
    # have, and both then answer "done".
    call = {"tool": "task", "args": {"description": "Look", "prompt": "look around", "agent": "cheap"}}
    s = ModelServer([[call], [{"text": "done"}]]).start()
    try:
        yield s
    finally:
        s.stop()


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_the_sub_runs_requests_name_the_definitions_model(
    wire: str, server: ModelServer, workspace: Path, tmp_path: Path
) -> None:
    agents = workspace / ".kgent" / "agents"
    agents.mkdir(parents=True)
    (agents / "cheap.md").write_text(
        "---\ndescription: Looks around cheaply\nmodel: cheap-model\n---\nBe quick.\n"
    )
    provider = CLASSES[wire](
        ProviderConfig(provider=wire, base_url=server.base_url(wire), model="test-model", api_key="sk-test")
    )
    set_trusted(workspace, True)  # a project's `model` counts once the project is trusted
    kernel = AgentKernel(provider, config=KernelConfig(mode="ask"))
    try:
        run = kernel.create_run("go", workspace=workspace)
        events = await collect(run)
        result = await run.result()
    finally:
        await kernel.aclose()
    assert result.status == "settled" and result.text == "done", result.error
    [start] = [e.event for e in events if isinstance(e, SubRunEvent) and isinstance(e.event, RunStart)]
    assert start.model == "cheap-model"

    bodies = [r.body for r in server.requests]
    sub = [b for b in bodies if "Be quick." in str(b.get("system") or b["messages"][0])]
    parent = [b for b in bodies if b not in sub]
    assert len(sub) == 2 and len(parent) == 2
    assert {b["model"] for b in sub} == {"cheap-model"} and {b["model"] for b in parent} == {"test-model"}
    assert server.connections == 1  # one client, kept alive: the parent's provider served both runs

    tree = await kernel.store.load(result.session_id)
    sub_answers = [
        e.data["message"]
        for e in tree.entries.values()
        if e.type == "message"
        and e.data["message"]["role"] == "assistant"
        and e.data["message"].get("model") == "cheap-model"
    ]
    assert len(sub_answers) == 2  # its refused call of `task`, then its answer
