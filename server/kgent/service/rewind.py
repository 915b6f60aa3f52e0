"""Rewind: every user message is a checkpoint. Restoring to one brings the workspace files the agent changed since
(the `review` entries of the runs after it on the branch) back to their text before those runs, and the caller then
forks the conversation just before the message. Transport-agnostic: the service serves it as `agent/rewind`.

Each file is walked back run by run, latest first: the run's hunks (those not rejected in a review) are reverted,
and the result must hash to the text the run found (`beforeSha`). Anything else changed the file meanwhile — the
user, an editor, another branch — so the file is a conflict, reported and left alone. Outside a git work tree the
change tracking sees only what the write tools wrote: the runs' shell commands are named as unknown effects.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kgent.changes.hunks import revert
from kgent.files.ops import FileOps
from kgent.kernel.review import text_sha
from kgent.service.review import ReviewedFile, gated, path_problem, review_files
from kgent.session.entries import SessionEntry, SessionTree
from kgent.session.store import SessionStore

Outcome = Literal["restored", "conflict", "unchanged", "unrestorable"]
SHELL_TOOLS = frozenset({"bash"})  # tools whose effects on files only git snapshots see
_SHOWN_COMMAND = 120  # characters of a command quoted in a note
_SHOWN_PROMPT = 60  # characters of a prompt a conflict names


class RewindError(ValueError):
    """The entry is not a checkpoint of the session's active branch: `code` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True, kw_only=True)
class FileRewind:
    """What rewinding does (or did) to one file. `text` is what it writes (None: removes it), for `restored`."""

    path: str
    outcome: Outcome
    reason: str | None = None
    current: str | None = None
    text: str | None = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "outcome": self.outcome}
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class RewindPlan:
    """A rewind worked out: the checkpoint message, where the new branch continues (its parent), per file what
    happens, and notes for the person (what cannot be restored)."""

    checkpoint: SessionEntry
    leaf_id: str | None
    files: list[FileRewind]
    notes: list[str]

    @property
    def prompt(self) -> str:
        return str(self.checkpoint.data.get("message", {}).get("text", ""))


def checkpoint_span(tree: SessionTree, entry_id: str) -> tuple[SessionEntry, list[SessionEntry]]:
    """The checkpoint (a user message on the active branch) and the entries after it on that branch."""
    if entry_id not in tree.entries:
        raise RewindError("entry_not_found", f"no entry {entry_id!r} in session {tree.info.id}")
    branch = tree.branch()
    at = next((i for i, e in enumerate(branch) if e.id == entry_id), None)
    entry = tree.entries[entry_id]
    if at is None:
        raise RewindError(
            "invalid_params", f"entry {entry_id!r} is not on the session's active branch: fork to it first"
        )
    message = entry.data.get("message")
    if entry.type != "message" or not isinstance(message, dict) or message.get("role") != "user":
        raise RewindError(
            "invalid_params", f"entry {entry_id!r} is not a user message: only those are checkpoints"
        )
    return entry, branch[at + 1 :]


async def in_git_work_tree(workspace: Path) -> bool:
    """Whether the workspace is inside a git work tree (then the runs' change tracking saw shell commands too)."""
    git = shutil.which("git")
    if git is None:
        return False
    try:
        proc = await asyncio.create_subprocess_exec(
            git,
            "rev-parse",
            "--is-inside-work-tree",
            cwd=workspace,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:  # the workspace is gone
        return False
    out, _ = await proc.communicate()
    return proc.returncode == 0 and out.strip() == b"true"


async def plan_rewind(tree: SessionTree, entry_id: str, fs: FileOps, *, git: bool) -> RewindPlan:
    """Work out the rewind to `entry_id` (nothing written): reads the files through `fs` (an editor's buffer counts).
    `git`: the workspace is a git work tree, so the runs' shell commands were tracked."""
    checkpoint, after = checkpoint_span(tree, entry_id)
    workspace = Path(tree.info.workspace)
    run_ids = [str(e.data["runId"]) for e in after if e.type == "review"]
    by_run = {rid: review_files(tree, rid) for rid in dict.fromkeys(run_ids)}
    chain: dict[str, list[ReviewedFile]] = {}  # path → its review files, in run order
    for rid in dict.fromkeys(run_ids):
        for f in by_run[rid]:
            chain.setdefault(f.path, []).append(f)
    unreviewed = {str(p) for e in after if e.type == "review" for p in e.data.get("unreviewed", [])}
    prompts = _run_prompts(str(checkpoint.data["message"].get("text", "")), after)
    files = [await _plan_file(fs, workspace, rel, chain[rel], prompts) for rel in sorted(chain)]
    files += [
        FileRewind(
            path=rel,
            outcome="unrestorable",
            reason="binary, too large or unreadable: its earlier content was not kept",
        )
        for rel in sorted(unreviewed - set(chain))
    ]
    prompt = str(checkpoint.data["message"].get("text", ""))
    notes = [] if git else _shell_notes(prompt, after)
    return RewindPlan(checkpoint=checkpoint, leaf_id=checkpoint.parent_id, files=files, notes=notes)


def _run_prompts(first: str, after: Sequence[SessionEntry]) -> dict[str, str]:
    """Per run id, the prompt it answered (its first user message after the previous run's review; `first`, the
    checkpoint's, for the first run): a conflict names it, never the run id, which means nothing to a person."""
    out: dict[str, str] = {}
    prompt: str | None = first
    for e in after:
        message = e.data.get("message") if e.type == "message" else None
        if isinstance(message, dict) and message.get("role") == "user" and prompt is None:
            prompt = str(message.get("text", ""))
        elif e.type == "review" and prompt is not None:
            out[str(e.data["runId"])] = prompt
            prompt = None
    return out


async def _plan_file(
    fs: FileOps, workspace: Path, rel: str, runs: Sequence[ReviewedFile], prompts: dict[str, str]
) -> FileRewind:
    fs = gated(fs, workspace)
    problem = path_problem(workspace, rel)
    if problem is not None:
        return FileRewind(path=rel, outcome="unrestorable", reason=problem)
    path = workspace / rel
    try:
        current = (await fs.read_bytes(path)).decode("utf-8") if await fs.exists(path) else None
    except (OSError, ValueError) as exc:
        return FileRewind(path=rel, outcome="conflict", reason=f"cannot read the file: {exc}")
    text = current
    for f in reversed(runs):
        live = [h for h in f.hunks if f.status[h.id] != "rejected"]
        if f.hunks and not live:
            continue  # every change of this run to the file was rejected (reverted) in a review
        for_prompt = f" for “{_short(prompts[f.run_id], _SHOWN_PROMPT)}”" if prompts.get(f.run_id) else ""
        if f.deleted != (text is None):
            why = (
                "created again since the agent deleted it"
                if f.deleted
                else "deleted since the agent wrote it"
            )
            return _conflict(rel, current, why + for_prompt)
        reverted, done = revert(text, live)
        changed = f"changed since the agent wrote it{for_prompt}"
        if not all(done.values()) or (f.created and reverted != ""):
            return _conflict(rel, current, changed)
        if f.created:
            text = None
            continue
        if f.before_sha is not None and text_sha(reverted) != f.before_sha:
            return _conflict(rel, current, changed)
        text = reverted
    if text == current:
        return FileRewind(path=rel, outcome="unchanged", current=current, text=text)
    return FileRewind(path=rel, outcome="restored", current=current, text=text)


def _conflict(rel: str, current: str | None, why: str) -> FileRewind:
    """A file left alone: `why` in a person's words (every front says "left as it is" itself, with the outcome)."""
    return FileRewind(path=rel, outcome="conflict", reason=why, current=current)


def _shell_notes(first: str, after: Sequence[SessionEntry]) -> list[str]:
    """Per prompt from the checkpoint (`first`) on, the shell commands its run ran: outside git nothing recorded
    their effects."""
    notes: list[str] = []
    prompt = _short(first)
    commands: list[str] = []

    def flush() -> None:
        if commands:
            shown = ", ".join(f"`{c}`" for c in commands)
            notes.append(
                f"The run of {prompt!r} ran shell commands outside a git work tree; what they changed is not "
                f"known and is not restored: {shown}"
            )

    for e in after:
        message = e.data.get("message") if e.type == "message" else None
        if not isinstance(message, dict):
            continue
        if message.get("role") == "user":
            flush()
            prompt, commands = _short(str(message.get("text", ""))), []
        for call in message.get("toolCalls", []) or []:
            if isinstance(call, dict) and call.get("name") in SHELL_TOOLS:
                args = call.get("arguments")
                command = args.get("command") if isinstance(args, dict) else None
                commands.append(_short(str(command or call.get("name"))))
    flush()
    return notes


def _short(text: str, limit: int = _SHOWN_COMMAND) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


async def apply_plan(plan: RewindPlan, fs: FileOps, workspace: Path) -> list[FileRewind]:
    """Write the plan's restored files through `fs`; a file that changed since the plan was made is a conflict."""
    out: list[FileRewind] = []
    fs = gated(fs, workspace)
    for f in plan.files:
        if f.outcome != "restored":
            out.append(f)
            continue
        path = workspace / f.path
        try:
            now = (await fs.read_bytes(path)).decode("utf-8") if await fs.exists(path) else None
            if now != f.current:
                out.append(_conflict(f.path, now, "the file changed while the rewind was worked out"))
                continue
            if f.text is None:
                await fs.remove(path)
            else:
                await fs.write_bytes_atomic(path, f.text.encode("utf-8"))
        except (OSError, ValueError) as exc:
            out.append(FileRewind(path=f.path, outcome="conflict", reason=f"cannot write the file: {exc}"))
            continue
        out.append(f)
    return out


async def rewind_session(
    store: SessionStore, tree: SessionTree, entry_id: str, fs: FileOps, *, dry_run: bool
) -> tuple[RewindPlan, list[FileRewind]]:
    """The whole rewind of a loaded session (the service's `agent/rewind`, the CLI's `kgent sessions rewind`): the
    plan, then — unless `dry_run` — the files written through `fs` and the leaf moved to just before the message.
    Returns the plan and what happened per file. The caller keeps runs off the session meanwhile."""
    workspace = Path(tree.info.workspace)
    plan = await plan_rewind(tree, entry_id, fs, git=await in_git_work_tree(workspace))
    if dry_run:
        return plan, plan.files
    files = await apply_plan(plan, fs, workspace)
    await store.set_leaf(tree.info.id, plan.leaf_id)
    return plan, files


def result_dict(
    session_id: str, plan: RewindPlan, files: Sequence[FileRewind], *, forked: bool
) -> dict[str, Any]:
    """The `agent/rewind` result (the wire's spelling), for every front."""
    return {
        "sessionId": session_id,
        "leafId": plan.leaf_id,
        "forked": forked,
        "prompt": plan.prompt,
        "files": [f.wire() for f in files],
        "notes": plan.notes,
    }
