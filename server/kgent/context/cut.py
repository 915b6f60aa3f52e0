"""Where to cut a branch for compaction, and what the checkpoint must carry forward. Pure functions over values.

A cut lands only before a user or an assistant message, never before a tool result, so a call and its result are
always on the same side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kgent.context.projection import latest_checkpoint, live_entries
from kgent.context.tokens import estimate_message
from kgent.core.messages import AssistantMessage, Message, UserMessage, message_from_dict
from kgent.session.entries import SessionEntry

READ_TOOLS = frozenset({"read"})
WRITE_TOOLS = frozenset({"write", "edit"})


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionPlan:
    """`covered`: message entries summarized now for the first time; `kept`: those still sent verbatim."""

    previous: SessionEntry | None
    covered: tuple[SessionEntry, ...]
    covered_messages: tuple[Message, ...]
    kept: tuple[SessionEntry, ...]
    read_files: tuple[str, ...]  # cumulative over this checkpoint and the ones before it
    modified_files: tuple[str, ...]

    @property
    def first_kept_id(self) -> str | None:
        return self.kept[0].id if self.kept else None


def find_cut(messages: Sequence[Message], keep_tokens: int) -> int | None:
    """Index of the first message to keep, so that about `keep_tokens` of the newest messages stay; None when
    nothing can be cut (everything fits, or no valid cut point leaves something to summarize).

    Walks back from the end until the kept estimate reaches `keep_tokens`, then moves to the nearest valid cut
    point at or after there (before a user or assistant message), else the nearest one before it.
    """
    reach: int | None = None
    total = 0
    for i in range(len(messages) - 1, -1, -1):
        total += estimate_message(messages[i])
        if total >= keep_tokens:
            reach = i
            break
    if reach is None:
        return None
    for j in range(reach, len(messages)):
        if _cuttable(messages[j]):
            return j if j > 0 else None
    for j in range(reach - 1, 0, -1):
        if _cuttable(messages[j]):
            return j
    return None


def _cuttable(message: Message) -> bool:
    return isinstance(message, UserMessage | AssistantMessage)


def plan_compaction(branch: Sequence[SessionEntry], keep_tokens: int) -> CompactionPlan | None:
    """What a new checkpoint at the end of `branch` would cover and keep; None when there is nothing to compact
    (the branch already ends in a checkpoint, or everything after the last one fits in `keep_tokens`)."""
    if not branch or branch[-1].type == "compaction":
        return None
    live = live_entries(branch)
    messages = [message_from_dict(e.data["message"]) for e in live]
    cut = find_cut(messages, keep_tokens)
    if cut is None:
        return None
    c = latest_checkpoint(branch)
    previous = branch[c] if c is not None else None
    read, modified = touched_files(messages[:cut], previous)
    return CompactionPlan(
        previous=previous,
        covered=tuple(live[:cut]),
        covered_messages=tuple(messages[:cut]),
        kept=tuple(live[cut:]),
        read_files=read,
        modified_files=modified,
    )


def touched_files(
    messages: Sequence[Message], previous: SessionEntry | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Files read and modified (by read / write / edit calls) in `messages`, plus those of the previous checkpoint."""
    read = set(previous.data.get("readFiles", ())) if previous else set()
    modified = set(previous.data.get("modifiedFiles", ())) if previous else set()
    for m in messages:
        if isinstance(m, AssistantMessage):
            for call in m.tool_calls:
                path = call.arguments.get("path")
                if not isinstance(path, str) or not path:
                    continue
                if call.name in READ_TOOLS:
                    read.add(path)
                elif call.name in WRITE_TOOLS:
                    modified.add(path)
    return tuple(sorted(read)), tuple(sorted(modified))
