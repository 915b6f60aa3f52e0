"""Project the active branch of a session into the messages of one provider request.

Pure: entries in, messages out. Other branches never appear (the caller passes one root-to-leaf path).
"""

from __future__ import annotations

from collections.abc import Sequence

from kgent.core.messages import (
    AssistantMessage,
    Message,
    SummaryMessage,
    ToolResultMessage,
    message_from_dict,
)
from kgent.session.entries import SessionEntry

INTERRUPTED = "tool_error: no result was recorded for this call (the run was interrupted before it finished)"


def own_context(branch: Sequence[SessionEntry]) -> Sequence[SessionEntry]:
    """The part of a branch its agent sees: after the latest `subrun` entry, where a sub-agent's run started afresh
    (with only its task prompt); the whole branch when there is none."""
    for i in range(len(branch) - 1, -1, -1):
        if branch[i].type == "subrun":
            return branch[i + 1 :]
    return branch


def latest_checkpoint(branch: Sequence[SessionEntry]) -> int | None:
    """Index of the latest `compaction` entry on the branch, or None."""
    for i in range(len(branch) - 1, -1, -1):
        if branch[i].type == "compaction":
            return i
    return None


def live_entries(branch: Sequence[SessionEntry]) -> list[SessionEntry]:
    """The message entries a request carries after the latest checkpoint's summary: the ones it kept, then the
    ones after it (all message entries when there is no checkpoint)."""
    c = latest_checkpoint(branch)
    if c is None:
        return [e for e in branch if e.type == "message"]
    start = c + 1
    first_kept = branch[c].data.get("firstKeptEntryId")
    if first_kept is not None:
        for j in range(c):
            if branch[j].id == first_kept:
                start = j
                break
    return [e for e in branch[start:c] if e.type == "message"] + [
        e for e in branch[c + 1 :] if e.type == "message"
    ]


def project(branch: Sequence[SessionEntry]) -> list[Message]:
    """Messages for a request: the latest checkpoint's summary, then the message entries it kept and those after it.

    Every tool call is followed by its result: a call whose result never reached the file (a killed run) gets an
    error result, and a result whose call is not in the projection is left out.
    """
    branch = own_context(branch)
    c = latest_checkpoint(branch)
    head: list[Message] = [SummaryMessage(text=branch[c].data["summary"])] if c is not None else []
    return head + pair_tool_results([message_from_dict(e.data["message"]) for e in live_entries(branch)])


def pair_tool_results(messages: Sequence[Message]) -> list[Message]:
    """Repair the call/result pairing: after each assistant message come exactly the results of its calls."""
    out: list[Message] = []
    pending: dict[str, str] = {}  # open tool calls of the latest assistant message: id → tool name

    def close_open() -> None:
        for call_id, name in pending.items():
            out.append(ToolResultMessage(tool_call_id=call_id, name=name, content=INTERRUPTED, is_error=True))
        pending.clear()

    for m in messages:
        if isinstance(m, ToolResultMessage):
            if m.tool_call_id in pending:
                del pending[m.tool_call_id]
                out.append(m)
            continue  # an orphan result: its call is not in this request
        close_open()
        if isinstance(m, AssistantMessage) and m.tool_calls:
            pending = {c.id: c.name for c in m.tool_calls}
        out.append(m)
    close_open()
    return out
