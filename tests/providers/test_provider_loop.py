"""The kernel's full tool loop through real HTTP, once per wire format: read → edit → bash → answer, plus the
failure paths a run must surface (retry events, auth failure, bad tool-argument JSON, broken stream, cancel)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from helpers import eventually
from kgent.core.events import MessageDelta, MessageEnd, RetryEvent, ToolCallEvent, ToolUpdate, event_to_dict
from kgent.kernel import AgentKernel, KernelConfig
from kgent.testing import Fault, ModelServer

from .helpers import KEY


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sample.py").write_text("value = 1\nprint(value)\n")
    return ws


@pytest.fixture
async def kernel_for(make_provider):
    kernels: list[AgentKernel] = []

    def make(wire: str, mode: str = "full", **config) -> AgentKernel:
        kernel = AgentKernel(make_provider(wire, **config), config=KernelConfig(mode=mode))
        kernels.append(kernel)
        return kernel

    yield make
    for kernel in kernels:
        await kernel.aclose()


async def run_to_end(kernel: AgentKernel, workspace: Path, prompt: str = "set value to 2"):
    run = kernel.create_run(prompt, workspace=str(workspace))
    events = [event async for event in run]
    return events, await run.result()


def wire_messages(server: ModelServer, index: int) -> list[dict]:
    return server.requests[index].body["messages"]


async def test_full_tool_loop(model_server: ModelServer, kernel_for, workspace: Path, wire: str):
    model_server.script = "tool-loop"  # the built-in script: read, edit, bash, answer
    events, result = await run_to_end(kernel_for(wire), workspace)

    assert result.status == "settled" and result.stop_reason == "end" and result.turns == 4
    assert (workspace / "sample.py").read_text() == "value = 2\nprint(value)\n"
    assert result.changed_paths == ("sample.py",) and "+value = 2" in result.patch
    assert result.text == "Updated sample.py: value is now 2, and running it prints 2."
    kinds = [e.type for e in events]
    assert (
        kinds[:2] == ["run_start", "user_message"] and kinds[-1] == "run_end" and kinds.count("run_end") == 1
    )
    # per turn: streamed deltas, then the authoritative message, then usage; then its tools
    first_end = kinds.index("message_end")
    assert set(kinds[2:first_end]) == {"message_delta"} and kinds[first_end + 1] == "usage"
    assert [e.name for e in events if isinstance(e, ToolCallEvent)] == ["read", "edit", "bash"]
    assert kinds.index("tool_call") > first_end
    done = [e for e in events if isinstance(e, ToolUpdate) and e.status == "completed"]
    assert "value = 1" in (done[0].output or "") and "2" in (done[-1].output or "")
    thinking = "".join(e.delta for e in events if isinstance(e, MessageDelta) and e.kind == "thinking")
    assert thinking == "Look at the file first."
    ends = [e.message for e in events if isinstance(e, MessageEnd)]
    assert [m.stop_reason for m in ends] == ["tool_use", "tool_use", "tool_use", "end"]
    assert all(m.provider == wire and m.usage is not None and m.usage.input_tokens > 0 for m in ends)

    # the wire: four requests over one keep-alive connection, the history echoed back as each vendor requires
    assert len(model_server.requests) == 4 and model_server.connections == 1
    last = wire_messages(model_server, 3)
    if wire == "openai":
        assert [m["role"] for m in last] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "tool",
        ]
        assert last[2]["reasoning_content"] == "Look at the file first."  # DeepSeek needs it back
        assert last[2]["tool_calls"][0]["function"] == {"name": "read", "arguments": '{"path": "sample.py"}'}
        assert last[3]["tool_call_id"] == last[2]["tool_calls"][0]["id"] and "value = 1" in last[3]["content"]
        assert "2" in last[7]["content"]
    else:
        assert [m["role"] for m in last] == [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
        ]
        thinking_block, text_block, tool_use = last[1]["content"]
        assert thinking_block == {
            "type": "thinking",
            "thinking": "Look at the file first.",
            "signature": "sig-1-0",
        }
        assert text_block == {"type": "text", "text": "Let me read sample.py."}
        result_block = last[2]["content"][0]
        assert result_block["type"] == "tool_result" and result_block["tool_use_id"] == tool_use["id"]
        assert "value = 1" in result_block["content"]
        assert model_server.requests[0].body["system"][0]["text"].startswith("You are Kgent")


async def test_retry_surfaces_as_run_events(
    model_server: ModelServer, kernel_for, workspace: Path, wire: str
):
    model_server.fail(Fault.http_status(503, retry_after="0.01"))
    events, result = await run_to_end(kernel_for(wire), workspace, "hi")
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert result.status == "settled" and len(retries) == 1
    assert retries[0].attempt == 1 and retries[0].delay_seconds == 0.01 and "HTTP 503" in retries[0].error


async def test_auth_failure_fails_the_run_with_an_actionable_message(
    model_server, kernel_for, workspace, wire
):
    model_server.fail(Fault.http_status(401, message=f"invalid key {KEY}"))
    events, result = await run_to_end(kernel_for(wire), workspace, "hi")
    assert result.status == "failed" and result.error["code"] == "authentication_failed"
    assert (
        "KGENT_API_KEY" in result.error["message"] and model_server.base_url(wire) in result.error["message"]
    )
    assert not [e for e in events if isinstance(e, RetryEvent)]
    assert KEY not in json.dumps([event_to_dict(e) for e in events]) and KEY not in repr(result)


async def test_bad_tool_argument_json_is_told_to_the_model_and_the_loop_continues(
    model_server, kernel_for, workspace, wire
):
    model_server.script = [
        [{"tool": "read", "raw_args": '{"path": "sample.py'}],
        [{"tool": "read", "args": {"path": "sample.py"}}],
        [{"text": "Read it."}],
    ]
    events, result = await run_to_end(kernel_for(wire), workspace, "read")
    assert result.status == "settled" and result.text == "Read it." and result.turns == 3
    second = wire_messages(model_server, 1)
    tool_result = second[-1] if wire == "openai" else second[-1]["content"][0]
    assert (
        tool_result["content"].startswith("invalid_arguments:") and "not valid JSON" in tool_result["content"]
    )
    if wire == "anthropic":
        assert tool_result["is_error"] is True


async def test_broken_stream_fails_the_run_without_silent_truncation(
    model_server, kernel_for, workspace, wire
):
    model_server.fail(Fault.cut(after_events=3 if wire == "openai" else 5))
    events, result = await run_to_end(kernel_for(wire), workspace, "hi")
    assert result.status == "failed" and result.error["code"] == "stream_error"
    (end,) = [e.message for e in events if isinstance(e, MessageEnd)]
    assert end.stop_reason == "error" and end.text == "Hello from "
    assert len(model_server.requests) == 1


async def test_context_overflow_reaches_the_run(model_server, kernel_for, workspace, wire):
    model_server.fail(Fault.context_too_long())
    _, result = await run_to_end(kernel_for(wire), workspace, "hi")
    assert result.status == "failed" and result.error["code"] == "context_overflow"


async def test_cancel_mid_stream_closes_the_connection(model_server, kernel_for, workspace, wire):
    model_server.script = [[{"text": "Working "}, {"sleep": 30}, {"text": "never"}]]
    run = kernel_for(wire).create_run("hi", workspace=str(workspace))
    async for event in run:
        if isinstance(event, MessageDelta):
            run.cancel()
    result = await asyncio.wait_for(run.result(), 10)  # not the 30 s the server sleeps
    assert result.status == "cancelled"
    await eventually(lambda: model_server.disconnects, "the server to see the connection close")
    assert model_server.disconnects == 1


async def test_denied_call_reaches_the_model_as_a_visible_error_result(
    model_server, kernel_for, workspace, wire
):
    model_server.script = [
        [{"tool": "bash", "args": {"command": "rm -rf /tmp/nothing"}}],
        [{"text": "Understood."}],
    ]
    run = kernel_for(wire, mode="ask").create_run("clean up", workspace=str(workspace))
    async for event in run:
        if event.type == "permission_request":
            run.resolve_permission(event.request_id, "reject_once")
    assert (await run.result()).status == "settled"
    last = wire_messages(model_server, 1)[-1]
    if wire == "openai":
        assert last["role"] == "tool" and last["content"].startswith("permission_denied")
    else:
        (block,) = last["content"]
        assert block["is_error"] is True and block["content"].startswith("permission_denied")
