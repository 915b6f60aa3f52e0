"""`agent/toolOutput`: all a tool call printed, read back from the session. A command whose output was too long for
the model saves it whole (its first and last 2 MiB past 4 MiB, kgent.tools.process) in the session's `<id>.outputs/`
directory; the call's result names that file (`details.fullOutputPath`). Only a file in that directory, under the
name the bash tool gives, is read: a result cannot point the request at any other file. A call whose output was short
enough has it whole in its result."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from kgent.core.redact import redact_keys
from kgent.sandbox import spill
from kgent.session.entries import SessionTree

_SAVED_NAME = re.compile(r"kgent-bash-[0-9a-f]{16}\.log")
MAX_SAVED = (
    spill.HEAD_BYTES + spill.TAIL_BYTES + 4096
)  # the kept head and tail, and the line saying what was dropped


def tool_result(tree: SessionTree, tool_call_id: str) -> dict[str, Any] | None:
    """The result message of the call (as stored): on the active branch first, else the newest anywhere in the
    session (a call on another branch, or a sub-agent's)."""
    on_branch = {e.id for e in tree.branch()}
    found: dict[str, Any] | None = None
    for entry in tree.entries.values():
        message = entry.data.get("message") if entry.type == "message" else None
        if (
            isinstance(message, dict)
            and message.get("role") == "tool"
            and message.get("toolCallId") == tool_call_id
        ):
            found = message
            if entry.id in on_branch:
                return message
    return found


def saved_output(named: object, directory: Path | None) -> str | None:
    """The text of the saved output `named` (a result's `fullOutputPath`) when it is a regular file of `directory`
    under the bash tool's name, redacted; None otherwise (gone, or not a file this request may read). A store that
    keeps no files (`directory` None) saves in the run's spill directory, read while the run lasts."""
    if not isinstance(named, str):
        return None
    path = Path(named)
    where = directory if directory is not None else path.parent
    if directory is None and path.parent.parent != spill.root():
        return None
    if not path.is_absolute() or path.parent != where or not _SAVED_NAME.fullmatch(path.name):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SAVED:
            return None
        data = f.read(MAX_SAVED + 1)
    return redact_keys(data.decode("utf-8", "replace"))


def full_output(message: dict[str, Any], directory: Path | None) -> tuple[str, bool]:
    """(text, truncated) for a call's stored result: its saved output when there is one, else its result text (all
    of it when the model was shown all; `truncated` when it was cut and the saved file is gone)."""
    details = message.get("details") if isinstance(message.get("details"), dict) else {}
    assert isinstance(details, dict)
    saved = saved_output(details.get("fullOutputPath"), directory)
    if saved is not None:
        return saved.removesuffix("\n"), bool(details.get("outputDroppedBytes"))
    content = message.get("content")
    return (content if isinstance(content, str) else ""), bool(details.get("truncation"))
