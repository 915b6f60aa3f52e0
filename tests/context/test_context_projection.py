"""Projection: the active branch only; the latest checkpoint's summary, then what it kept and what came after;
never a tool call without its result."""

from __future__ import annotations

from kgent.context.projection import INTERRUPTED, live_entries, pair_tool_results, project
from kgent.core.messages import (
    AssistantMessage,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    message_to_dict,
)
from kgent.session.entries import SessionEntry, SessionInfo, SessionTree


class Chain:
    """Builds a tree with readable ids: each add() chains after `at` (default: the last entry)."""

    def __init__(self) -> None:
        self.tree = SessionTree(info=SessionInfo(id="t", workspace="/w", created=""))
        self.last: str | None = None

    def add(self, id: str, type: str, at: str | None = "", **data) -> str:
        parent = self.last if at == "" else at
        self.tree.add([SessionEntry(id=id, parent_id=parent, type=type, timestamp="", data=data)])
        self.last = id
        return id

    def msg(self, id: str, message, at: str | None = "") -> str:
        return self.add(id, "message", at, message=message_to_dict(message))


def call(id: str, name: str = "read", **args) -> AssistantMessage:
    return AssistantMessage(
        text="", tool_calls=(ToolCall(id=id, name=name, arguments=args),), stop_reason="tool_use"
    )


def result(id: str, name: str = "read", content: str = "ok") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=id, name=name, content=content)


def roles(messages) -> list[str]:
    return [getattr(m, "text", None) or getattr(m, "tool_call_id", None) or m.role for m in messages]


def test_plain_branch_projects_its_messages_only() -> None:
    c = Chain()
    c.add("cfg", "config", None, mode="ask", provider="p", model="m")
    c.msg("u1", UserMessage(text="hi"))
    c.add("perm", "permission", toolCallId="x", decision="allow_once")
    c.msg("a1", AssistantMessage(text="hello"))
    c.add("lab", "label", targetId="u1", label="start")
    assert roles(project(c.tree.branch())) == ["hi", "hello"]


def test_other_branches_never_appear() -> None:
    c = Chain()
    c.msg("u1", UserMessage(text="q1"), at=None)
    c.msg("a1", AssistantMessage(text="a1"))
    c.msg("u2", UserMessage(text="q2 on branch A"))
    c.msg("a2", AssistantMessage(text="a2 on branch A"))
    c.msg("u3", UserMessage(text="q3 on branch B"), at="a1")
    c.msg("a3", AssistantMessage(text="a3 on branch B"))
    assert roles(project(c.tree.branch())) == ["q1", "a1", "q3 on branch B", "a3 on branch B"]
    assert roles(project(c.tree.branch("a2"))) == ["q1", "a1", "q2 on branch A", "a2 on branch A"]


def test_latest_checkpoint_summary_then_kept_then_newer() -> None:
    c = Chain()
    for i in range(1, 5):
        c.msg(f"u{i}", UserMessage(text=f"q{i}"), at=c.last)
        c.msg(f"a{i}", AssistantMessage(text=f"a{i}"))
    c.add("cp1", "compaction", summary="S1", firstKeptEntryId="u2")
    c.msg("u5", UserMessage(text="q5"))
    assert roles(project(c.tree.branch())) == ["S1", "q2", "a2", "q3", "a3", "q4", "a4", "q5"]
    c.add("cp2", "compaction", summary="S2", firstKeptEntryId="u4", previousCheckpointId="cp1")
    c.msg("a5", AssistantMessage(text="a5"))
    projected = project(c.tree.branch())
    assert isinstance(projected[0], SummaryMessage)
    assert roles(projected) == ["S2", "q4", "a4", "q5", "a5"]  # the older checkpoint is skipped
    assert [e.id for e in live_entries(c.tree.branch())] == ["u4", "a4", "u5", "a5"]


def test_checkpoint_without_kept_entries() -> None:
    c = Chain()
    c.msg("u1", UserMessage(text="q1"), at=None)
    c.add("cp", "compaction", summary="S", firstKeptEntryId=None)
    c.msg("u2", UserMessage(text="q2"))
    assert roles(project(c.tree.branch())) == ["S", "q2"]


def test_a_call_without_a_result_gets_an_error_result_in_place() -> None:
    messages = [
        UserMessage(text="go"),
        AssistantMessage(
            text="",
            tool_calls=(ToolCall(id="c1", name="read"), ToolCall(id="c2", name="ls")),
            stop_reason="tool_use",
        ),
        result("c1"),
        UserMessage(text="continue"),
    ]
    paired = pair_tool_results(messages)
    assert roles(paired) == ["go", "assistant", "c1", "c2", "continue"]
    assert paired[3].is_error and paired[3].content == INTERRUPTED and paired[3].name == "ls"


def test_an_orphan_result_is_left_out_and_a_trailing_call_is_closed() -> None:
    paired = pair_tool_results([result("zz"), UserMessage(text="go"), call("c9")])
    assert roles(paired) == ["go", "assistant", "c9"]
    assert paired[-1].is_error
