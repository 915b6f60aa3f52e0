"""The ACP front's pure mappings: stop reasons, prompt blocks, history replay."""

from __future__ import annotations

from acp import schema as S

from kgent.acp.updates import prompt_text, replay, stop_reason
from kgent.core.events import RunResult
from kgent.core.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from kgent.tools.read import ReadTool


def result(status: str, reason: str, code: str | None = None) -> RunResult:
    error = {"code": code, "message": "m"} if code else None
    return RunResult(run_id="r", session_id="s", status=status, stop_reason=reason, text="", error=error)  # type: ignore[arg-type]


def test_stop_reasons() -> None:
    assert stop_reason(result("settled", "end")) == "end_turn"
    assert stop_reason(result("settled", "max_tokens")) == "max_tokens"
    assert stop_reason(result("failed", "max_turns", "max_turns")) == "max_turn_requests"
    assert stop_reason(result("failed", "error", "content_filter")) == "refusal"
    assert stop_reason(result("cancelled", "cancelled")) == "cancelled"
    assert stop_reason(result("failed", "error", "provider_error")) is None
    assert stop_reason(result("failed", "cost_limit", "cost_limit")) is None


def test_prompt_blocks_become_the_models_text() -> None:
    blocks = [
        S.TextContentBlock(type="text", text="fix this"),
        S.ResourceContentBlock(type="resource_link", uri="file:///w/a.py", name="a.py"),
        S.EmbeddedResourceContentBlock(
            type="resource", resource=S.TextResourceContents(uri="file:///w/b.py", text="x = 1")
        ),
    ]
    assert (
        prompt_text(blocks)
        == "fix this\n\n[a.py](file:///w/a.py)\n\n<context uri='file:///w/b.py'>\nx = 1\n</context>"
    )


def test_replay_follows_the_conversation() -> None:
    history = [
        UserMessage(text="hi"),
        AssistantMessage(
            text="reading",
            thinking="hmm",
            tool_calls=(ToolCall(id="c1", name="read", arguments={"path": "a.py", "offset": 3}),),
        ),
        ToolResultMessage(tool_call_id="c1", name="read", content="x", is_error=True),
    ]
    updates = list(replay(history, {"read": ReadTool()}, "/w"))
    assert [u.session_update for u in updates] == [
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
    ]
    call = updates[3]
    assert call.kind == "read" and call.locations[0].path == "/w/a.py" and call.locations[0].line == 3
    assert call.title == "Read a.py"  # the title the call had live
    assert updates[4].status == "failed"
