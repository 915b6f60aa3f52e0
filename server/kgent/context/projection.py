"""Project the active branch of a session into the messages of one provider request.

Pure: entries in, messages out. Other branches never appear (the caller passes one root-to-leaf path).
"""

from __future__ import annotations

from collections.abc import Sequence

from kgent.context.instructions import ENTRY_TYPE as INSTRUCTIONS
from kgent.context.instructions import entry_files, latest, render
from kgent.context.skills import ENTRY_TYPE as SKILLS
from kgent.context.skills import changed_note, entry_skills
from kgent.core.messages import (
    AssistantMessage,
    InstructionsMessage,
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

    `instructions` entries (kgent.context.instructions) become messages where they are on the branch, so the
    instructions loaded when a run opened are the first message and nested ones follow the results that found
    them; those a checkpoint covers come back as one message (each file's latest text) right after its summary.
    Every tool call is followed by its result: a call whose result never reached the file (a killed run) gets an
    error result, and a result whose call is not in the projection is left out.
    """
    branch = own_context(branch)
    c = latest_checkpoint(branch)
    if c is None:
        return pair_tool_results([m for e in branch if (m := _message(e)) is not None])
    start = _kept_from(branch, c)
    head: list[Message] = [SummaryMessage(text=branch[c].data["summary"])]
    covered = latest(e.data for e in branch[:start] if e.type == INSTRUCTIONS)
    if covered:
        head.append(InstructionsMessage(text=render(list(covered.values()))))
    skills = [e for e in branch[:start] if e.type == SKILLS]
    if skills and not skills[-1].data.get("inPrompt"):
        head.append(InstructionsMessage(text=changed_note(entry_skills(skills[-1].data))))
    live = [*branch[start:c], *branch[c + 1 :]]
    return head + pair_tool_results([m for e in live if (m := _message(e)) is not None])


def _kept_from(branch: Sequence[SessionEntry], c: int) -> int:
    first_kept = branch[c].data.get("firstKeptEntryId")
    if first_kept is not None:
        for j in range(c):
            if branch[j].id == first_kept:
                return j
    return c + 1


def _message(entry: SessionEntry) -> Message | None:
    if entry.type == "message":
        return message_from_dict(entry.data["message"])
    if entry.type == SKILLS and not entry.data.get("inPrompt"):  # those inPrompt are in the system prompt
        return InstructionsMessage(text=changed_note(entry_skills(entry.data)))
    if entry.type == INSTRUCTIONS:
        files = entry_files(entry.data)
        return InstructionsMessage(text=render(files)) if files else None
    return None


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
