"""Sub-agents people define (`.kgent/agents/NAME.md`, the user's `agents/`), through real kernel runs on the scripted
provider: the `task` call's `agent` picks one; its tools are its definition's (the call may narrow them, never widen
them), its mode the narrower of its own and its parent's, its model its definition's on the parent's provider, and
its instructions end its system prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import collect
from kgent.core.events import PermissionRequest, RunStart, SubRunEvent, ToolCallEvent, ToolUpdate
from kgent.core.messages import UserMessage
from kgent.core.paths import user_config_dir
from kgent.ext.trust import set_trusted
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider

ORIGINAL = "value = 1\nprint(value)\n"


def define(folder: Path, name: str, front: str, body: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\n{front}\n---\n{body}")
    return path


def project_agents(workspace: Path) -> Path:
    return workspace / ".kgent" / "agents"


def script(tmp_path: Path, turns: list[Any], prompts: dict[str, Any]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": turns, "prompts": prompts}))
    return str(path)


def task(agent: str | None, prompt: str, **more: Any) -> dict[str, Any]:
    args = {"description": f"Do {prompt}", "prompt": prompt, **more}
    if agent is not None:
        args["agent"] = agent
    return {"tool": "task", "args": args}


def own(events: list[Any]) -> list[Any]:
    return [e for e in events if not isinstance(e, SubRunEvent)]


def inner(events: list[Any]) -> list[Any]:
    return [e.event for e in events if isinstance(e, SubRunEvent)]


def task_results(events: list[Any]) -> list[ToolUpdate]:
    return [e for e in own(events) if isinstance(e, ToolUpdate) and e.status in ("completed", "failed")]


def sub_requests(provider: ScriptedProvider, prompt: str) -> list[Any]:
    return [r for r in provider.requests if r.messages[0] == UserMessage(text=prompt)]


async def test_a_sub_agent_defined_with_read_and_grep_cannot_edit_even_under_full(
    workspace: Path, tmp_path: Path
) -> None:
    define(
        project_agents(workspace),
        "reader",
        "description: Reads code and reports on it\ntools: [read, grep]",
        "Only ever read. Report what you found.",
    )
    edit = {"path": "sample.py", "oldText": "value = 1", "newText": "value = 2"}
    provider = ScriptedProvider(
        script(
            tmp_path,
            [[task("reader", "change it")], [{"text": "done"}]],
            {"change it": [[{"tool": "edit", "args": edit}], [{"text": "I could not edit."}]]},
        )
    )
    kernel = AgentKernel(provider, config=KernelConfig(mode="full"))
    run = kernel.create_run("go", workspace=workspace)
    events = await collect(run)
    assert (await run.result()).status == "settled"

    # the sub-agent's edit is a call of a tool it does not have: an error result, and the file is as it was
    sub = inner(events)
    [start] = [e for e in sub if isinstance(e, RunStart)]
    assert start.mode == "full" and start.agent == "Do change it"  # no `mode` in the definition: its parent's
    [refused] = [e for e in sub if isinstance(e, ToolUpdate) and e.status == "failed"]
    assert refused.output == "Unknown tool: edit" and refused.is_error
    assert (workspace / "sample.py").read_text() == ORIGINAL
    [called] = [e for e in own(events) if isinstance(e, ToolCallEvent)]
    assert called.title == "Sub-agent reader: Do change it"
    [answer] = task_results(events)
    assert answer.output == "I could not edit." and answer.status == "completed"

    # it was offered read and grep only, and its system prompt ends with its instructions
    requests = sub_requests(provider, "change it")
    assert [t.name for t in requests[0].tools] == ["read", "grep"]
    assert requests[0].system_prompt.endswith(
        "You are the sub-agent `reader`: Reads code and reports on it\n"
        f"Your instructions ({project_agents(workspace) / 'reader.md'}):\nOnly ever read. Report what you found."
    )
    # the parent's prompt listed it, and the parent's own prompt has no instructions of a definition
    parent = provider.requests[0]
    assert "- reader: Reads code and reports on it (tools: read, grep)" in parent.system_prompt
    assert "You are the sub-agent" not in parent.system_prompt
    # the session's marker of the sub-run names what it had
    tree = await kernel.store.load(run.session_id)
    [marker] = [e for e in tree.entries.values() if e.type == "subrun"]
    assert marker.data["tools"] == ["read", "grep"]


async def test_the_calls_tools_narrow_a_definition_and_never_widen_it(
    workspace: Path, tmp_path: Path
) -> None:
    define(project_agents(workspace), "reader", "description: Reads\ntools: Read, Grep, Glob")
    provider = ScriptedProvider(
        script(
            tmp_path,
            [
                [task("reader", "wider", tools=["read", "edit"])],
                [task("reader", "narrower", tools=["find"])],
                [task("reader", "as defined")],
                [{"text": "done"}],
            ],
            {"narrower": [[{"text": "found"}]], "as defined": [[{"text": "read"}]]},
        )
    )
    kernel = AgentKernel(provider, config=KernelConfig(mode="full"))
    run = kernel.create_run("go", workspace=workspace)
    events = await collect(run)
    wider, narrower, as_defined = task_results(events)
    assert wider.status == "failed" and wider.output == (
        "task_tools: the sub-agent 'reader' may have only read, grep, find; `tools` can narrow that, not add edit"
    )
    assert sub_requests(provider, "wider") == []  # refused before it started
    assert (narrower.output, as_defined.output) == ("found", "read")
    assert [t.name for t in sub_requests(provider, "narrower")[0].tools] == ["find"]
    # Claude Code's names for them (Read, Grep, Glob) are this run's read, grep, find
    assert [t.name for t in sub_requests(provider, "as defined")[0].tools] == ["read", "grep", "find"]


async def test_unknown_names_and_unknown_tools_are_clear_errors(workspace: Path, tmp_path: Path) -> None:
    define(project_agents(workspace), "typo", "description: Has a typo\ntools: read, grpe")
    define(project_agents(workspace), "broken", "description: d\nmode: yolo")
    define(user_config_dir() / "agents", "mine", "description: The user's own")
    provider = ScriptedProvider(
        script(
            tmp_path,
            [[task("nobody", "x")], [task("typo", "y")], [task(None, "plain")], [{"text": "done"}]],
            {"plain": [[{"text": "plain answer"}]]},
        )
    )
    kernel = AgentKernel(provider, config=KernelConfig(mode="ask"))
    events = await collect(kernel.create_run("go", workspace=workspace))
    unknown, typo, plain = task_results(events)
    assert unknown.status == "failed" and unknown.output is not None
    broken = project_agents(workspace) / "broken.md"
    assert unknown.output == (
        "task_agent: there is no sub-agent 'nobody'; defined here: mine, typo; left out: "
        f"{broken} (its `mode`: unknown permission mode 'yolo'; valid modes: plan, ask, auto, full, risk_based; "
        "aliases: interactive (ask), allow_all (full))"
    )
    assert typo.output is not None and typo.output.startswith(
        f"task_agent: the sub-agent 'typo' ({project_agents(workspace) / 'typo.md'}) lists tools this run does "
        "not have: grpe; its tools are read, write, edit, bash"
    )
    assert plain.output == "plain answer"  # a call without `agent` is the plain sub-agent it always was
    assert [t.name for t in sub_requests(provider, "plain")[0].tools] == ["read", "grep", "find", "ls"]


@pytest.mark.parametrize(
    ("parent", "ceiling", "effective"),
    [
        ("auto", "plan", "plan"),
        ("ask", "full", "ask"),
        ("risk_based", "auto", "auto"),
        ("plan", "auto", "plan"),
    ],
)
async def test_a_definitions_mode_is_a_ceiling_under_its_parents(
    workspace: Path, tmp_path: Path, parent: str, ceiling: str, effective: str
) -> None:
    define(project_agents(workspace), "writer", f"description: Writes\ntools: [read, write]\nmode: {ceiling}")
    new_file = {"path": "new.txt", "content": "hello\n"}
    provider = ScriptedProvider(
        script(
            tmp_path,
            [[task("writer", "write it")], [{"text": "done"}]],
            {"write it": [[{"tool": "write", "args": new_file}], [{"text": "tried"}]]},
        )
    )
    kernel = AgentKernel(provider, config=KernelConfig(mode=parent))
    events = await collect(kernel.create_run("go", workspace=workspace), "reject_once")
    sub = inner(events)
    [start] = [e for e in sub if isinstance(e, RunStart)]
    assert start.mode == effective
    asked = [e for e in sub if isinstance(e, PermissionRequest)]
    [write_result] = [e for e in sub if isinstance(e, ToolUpdate) and e.status in ("completed", "failed")]
    if effective in ("plan",):  # refused by the mode: nobody is asked
        assert asked == [] and (write_result.output or "").startswith("permission_denied:")
        assert not (workspace / "new.txt").exists()
    elif effective == "ask":  # asked (and the person said no)
        assert len(asked) == 1 and not (workspace / "new.txt").exists()
    else:  # auto writes the workspace unasked
        assert asked == [] and (workspace / "new.txt").read_text() == "hello\n"


async def test_a_definitions_model_runs_on_the_parents_provider(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    define(user_config_dir() / "agents", "cheap", "description: Cheap\nmodel: cheap-model")
    define(project_agents(workspace), "pricey", "description: Pricey\nmodel: pricey-model")
    define(project_agents(workspace), "same", "description: Same\nmodel: inherit")
    turns = [[task("cheap", "a")], [task("pricey", "b")], [task("same", "c")], [{"text": "done"}]]
    answers = {p: [[{"text": f"answer {p}"}]] for p in "abc"}
    provider = ScriptedProvider(script(tmp_path, turns, answers))
    kernel = AgentKernel(provider, config=KernelConfig(mode="ask"))
    run = kernel.create_run("go", workspace=workspace)
    events = await collect(run)
    parent_model = provider.model
    starts = {e.prompt: e.model for e in inner(events) if isinstance(e, RunStart)}
    # the user's definition: its model; an untrusted project's: the parent's (a project only narrows until trusted)
    assert starts == {"a": "cheap-model", "b": parent_model, "c": parent_model}
    assert {r.model for r in sub_requests(provider, "a")} == {"cheap-model"}
    assert {r.model for r in sub_requests(provider, "b")} == {parent_model}
    assert {r.model for r in provider.requests if r.messages[0] == UserMessage(text="go")} == {parent_model}
    # the sub-run's answer is that model's, in its session entries too
    tree = await kernel.store.load(run.session_id)
    models = {
        e.data["message"]["text"]: e.data["message"].get("model")
        for e in tree.entries.values()
        if e.type == "message" and e.data["message"]["role"] == "assistant"
    }
    assert models["answer a"] == "cheap-model" and models["answer b"] == parent_model

    set_trusted(workspace, True)
    provider2 = ScriptedProvider(script(tmp_path, turns, answers))
    again = await collect(
        AgentKernel(provider2, config=KernelConfig(mode="ask")).create_run("go", workspace=workspace)
    )
    assert {e.prompt: e.model for e in inner(again) if isinstance(e, RunStart)}["b"] == "pricey-model"


async def test_a_cost_limit_needs_the_price_of_a_definitions_model(workspace: Path, tmp_path: Path) -> None:
    define(user_config_dir() / "agents", "unpriced", "description: U\nmodel: no-such-model-xyz")
    define(user_config_dir() / "agents", "priced", "description: P\nmodel: claude-sonnet-4-5")
    provider = ScriptedProvider(
        script(
            tmp_path,
            [[task("unpriced", "u")], [task("priced", "p")], [{"text": "done"}]],
            {"p": [[{"text": "priced answer"}]]},
        ),
        model="deepseek-chat",
    )
    kernel = AgentKernel(provider, config=KernelConfig(mode="ask", cost_limit=5.0))
    events = await collect(kernel.create_run("go", workspace=workspace))
    unpriced, priced = task_results(events)
    assert unpriced.output == (
        "task_agent: the sub-agent 'unpriced' runs on model 'no-such-model-xyz', whose price the price table does "
        "not know, and this run has a cost limit; use another sub-agent or none"
    )
    assert priced.output == "priced answer"
    [start] = [e for e in inner(events) if isinstance(e, RunStart)]
    assert start.model == "claude-sonnet-4-5"
