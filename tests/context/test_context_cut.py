"""Cut points: never between a tool call and its result; what a checkpoint covers, keeps and carries forward."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kgent.context.cut import find_cut, plan_compaction
from kgent.context.projection import project
from kgent.core.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage, message_to_dict
from kgent.session.entries import SessionEntry


def entries(messages) -> list[SessionEntry]:
    out, parent = [], None
    for i, m in enumerate(messages):
        out.append(
            SessionEntry(
                id=f"m{i}",
                parent_id=parent,
                type="message",
                timestamp="",
                data={"message": message_to_dict(m)},
            )
        )
        parent = out[-1].id
    return out


def turn(n: int, calls: int, size: int, name: str = "read") -> list:
    """A user message, then `calls` rounds of assistant tool call + result, then a final answer."""
    out: list = [UserMessage(text=f"task {n} " + "u" * size)]
    for k in range(calls):
        cid = f"c{n}_{k}"
        out.append(
            AssistantMessage(
                text="a" * size,
                stop_reason="tool_use",
                tool_calls=(ToolCall(id=cid, name=name, arguments={"path": f"f{n}_{k}.py"}),),
            )
        )
        out.append(ToolResultMessage(tool_call_id=cid, name=name, content="r" * size * 3))
    out.append(AssistantMessage(text=f"done {n}"))
    return out


def test_cut_snaps_forward_to_a_user_or_assistant_message() -> None:
    msgs = turn(1, 2, 40) + turn(2, 2, 40)
    cut = find_cut(msgs, 60)
    assert cut is not None and isinstance(msgs[cut], UserMessage | AssistantMessage)
    assert not isinstance(msgs[cut], ToolResultMessage)


def test_nothing_to_cut_when_everything_fits() -> None:
    assert find_cut(turn(1, 2, 10), 10_000) is None


def test_a_huge_last_result_cuts_before_its_call() -> None:
    msgs = [
        UserMessage(text="go"),
        AssistantMessage(text="x", tool_calls=(ToolCall(id="c", name="read"),)),
        ToolResultMessage(tool_call_id="c", name="read", content="z" * 10_000),
    ]
    assert find_cut(msgs, 100) == 1


@settings(max_examples=200, deadline=None)
@given(
    shape=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 60)), min_size=1, max_size=8),
    keep=st.integers(1, 400),
)
def test_no_cut_ever_separates_a_call_from_its_result(shape, keep) -> None:
    msgs = [m for n, (calls, size) in enumerate(shape) for m in turn(n, calls, size)]
    branch = entries(msgs)
    plan = plan_compaction(branch, keep)
    if plan is None:
        return
    assert plan.covered and plan.kept
    kept = [m for m in project(branch[: len(plan.covered) + len(plan.kept)])]
    first_kept = msgs[len(plan.covered)]
    assert isinstance(first_kept, UserMessage | AssistantMessage)
    kept_msgs = msgs[len(plan.covered) :]
    calls = {c.id for m in kept_msgs if isinstance(m, AssistantMessage) for c in m.tool_calls}
    results = {m.tool_call_id for m in kept_msgs if isinstance(m, ToolResultMessage)}
    assert calls == results  # every kept call has its result and every kept result its call
    covered_calls = {
        c.id for m in plan.covered_messages if isinstance(m, AssistantMessage) for c in m.tool_calls
    }
    covered_results = {m.tool_call_id for m in plan.covered_messages if isinstance(m, ToolResultMessage)}
    assert covered_calls == covered_results
    assert len(kept) == len(msgs)


def test_plan_records_files_cumulatively_and_skips_a_fresh_checkpoint() -> None:
    msgs = turn(1, 2, 40) + turn(2, 1, 40, name="edit") + turn(3, 1, 40)
    branch = entries(msgs)
    plan = plan_compaction(branch, 80)
    assert plan is not None and plan.previous is None
    assert plan.read_files == ("f1_0.py", "f1_1.py")
    assert plan.modified_files == ("f2_0.py",)
    assert plan.first_kept_id == plan.kept[0].id
    checkpoint = SessionEntry(
        id="cp",
        parent_id=branch[-1].id,
        type="compaction",
        timestamp="",
        data={
            "summary": "S",
            "firstKeptEntryId": plan.first_kept_id,
            "readFiles": ["old.py"],
            "modifiedFiles": [],
        },
    )
    assert plan_compaction([*branch, checkpoint], 80) is None  # already compacted at this leaf
    more = turn(4, 3, 60, name="write")
    tail = entries(more)
    tail = [
        SessionEntry(
            id=f"n{i}", parent_id=("cp" if i == 0 else f"n{i - 1}"), type="message", timestamp="", data=e.data
        )
        for i, e in enumerate(tail)
    ]
    again = plan_compaction([*branch, checkpoint, *tail], 80)
    assert again is not None and again.previous is checkpoint
    assert "old.py" in again.read_files and set(again.modified_files) >= {"f4_0.py"}
    covered = {e.id for e in again.covered}
    assert covered.isdisjoint(
        e.id for e in plan.covered
    )  # only the span the previous checkpoint did not cover
