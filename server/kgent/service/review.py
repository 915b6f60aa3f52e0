"""Review of a session's changes, hunk by hunk: what each run changed (its `review` entry), what the person decided
(`review_decision` entries), and applying new decisions — rejecting reverts exactly those hunks through the given
FileOps (an editor's buffer when the host serves the file), and a hunk whose lines changed since is a conflict,
left alone. Transport-agnostic: the daemon serves it as `agent/review` / `agent/applyReview`.

Decisions are entries of the session (any branch counts: they describe files, not the conversation), so a review
survives a daemon restart. A rejection leaves a note for the model: the service steers a live run with it, or it is
put before the next prompt of the session (`pending_note`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Literal

from kgent.changes.hunks import Hunk, lines, locate, revert
from kgent.files.gate import Refused, admit
from kgent.files.gatedops import GatedFiles
from kgent.files.ops import FileOps
from kgent.session.entries import SessionEntry, SessionTree, new_entry

Status = Literal["pending", "accepted", "rejected"]
Outcome = Literal["accepted", "rejected", "conflict", "not_found", "already_rejected"]
_NOTE_TEXT = 160  # characters of a reverted hunk's text quoted to the model


@dataclass(slots=True, kw_only=True)
class ReviewedFile:
    """One file of one run's review set, with each hunk's current status."""

    run_id: str
    path: str
    created: bool
    deleted: bool
    hunks: list[Hunk]
    status: dict[str, Status] = field(default_factory=dict)
    before_sha: str | None = None  # the file's text before the run (absent in older sessions)


@dataclass(frozen=True, slots=True, kw_only=True)
class HunkOutcome:
    hunk_id: str
    outcome: Outcome
    path: str | None = None
    message: str | None = None


def review_files(tree: SessionTree, run_id: str | None = None) -> list[ReviewedFile]:
    """The review sets of a session's runs (all, or one), with the statuses the decisions so far give them."""
    files: list[ReviewedFile] = []
    status: dict[str, Status] = {}
    for entry in tree.entries.values():  # append order: later decisions win
        if entry.type == "review" and (run_id is None or entry.data.get("runId") == run_id):
            for f in entry.data.get("files", []):
                files.append(
                    ReviewedFile(
                        run_id=str(entry.data["runId"]),
                        path=str(f["path"]),
                        created=bool(f.get("created")),
                        deleted=bool(f.get("deleted")),
                        hunks=[Hunk.from_dict(h) for h in f.get("hunks", [])],
                        before_sha=f.get("beforeSha"),
                    )
                )
        elif entry.type == "review_decision":
            for d in entry.data.get("decisions", []):
                status[str(d["hunkId"])] = d["status"]
    for f in files:
        f.status = {h.id: status.get(h.id, "pending") for h in f.hunks}
    return files


def path_problem(workspace: Path, rel: str) -> str | None:
    """Why the recorded path `rel` may not be touched in `workspace` (absolute, `..`, a symlink or anything else
    that ends outside it once resolved), or None. Checked before every read and write of a review."""
    if not rel or "\x00" in rel:
        return "the recorded path is empty or not a path"
    if os.path.isabs(rel) or PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute():
        return f"the recorded path {rel!r} is absolute, not inside the workspace"
    if ".." in PurePosixPath(rel.replace("\\", "/")).parts:
        return f"the recorded path {rel!r} leaves the workspace (..)"
    try:  # the files gate: inside after symlinks; protected files are the person's to revert (the run changed them)
        where = admit(workspace, rel, write=True, protected_ok=True)
    except Refused:
        where = None
    if where is None or where.rel == ".":
        return f"the recorded path {rel!r} resolves outside the workspace (a symlink?)"
    return None


def gated(fs: FileOps, workspace: Path) -> FileOps:
    """`fs` behind the files gate, for the person's review and rewind: inside the workspace only, protected files
    included (they act on what a run was approved to change)."""
    return fs if isinstance(fs, GatedFiles) else GatedFiles(fs, workspace, protected_ok=True)


async def current_starts(
    fs: FileOps, workspace: Path, files: Sequence[ReviewedFile]
) -> dict[str, int | None]:
    """Where each hunk that is not rejected has its new text in the file now (1-based line; through `fs`, so an
    editor's buffer counts), or None when it is not there any more (rejecting it would conflict)."""
    out: dict[str, int | None] = {}
    texts: dict[str, list[str] | None] = {}
    fs = gated(fs, workspace)
    for f in files:
        live = [h for h in f.hunks if f.status[h.id] != "rejected"]
        if not live:
            continue
        if f.path not in texts:
            path = workspace / f.path
            texts[f.path] = None  # a path outside the workspace is never read: shown as not there
            try:
                if path_problem(workspace, f.path) is None:
                    data = await fs.read_bytes(path) if await fs.exists(path) else b""
                    texts[f.path] = lines(data.decode("utf-8"))
            except (OSError, ValueError):
                pass
        text = texts[f.path]
        for h in live:
            at = locate(text, h) if text is not None else None
            out[h.id] = None if at is None else at + 1
    return out


async def apply_review(
    tree: SessionTree, fs: FileOps, accept: Sequence[str], reject: Sequence[str]
) -> tuple[list[HunkOutcome], SessionEntry | None]:
    """Accept and reject hunks of `tree`'s session. Returns the outcome per hunk (in request order: accepts, then
    rejects) and the `review_decision` entry to append (None when nothing changed), chained at the tree's leaf."""
    files = review_files(tree)
    where = {h.id: (f, h) for f in files for h in f.hunks}
    workspace = Path(tree.info.workspace)
    fs = gated(fs, workspace)
    outcomes: dict[str, HunkOutcome] = {}
    decided: list[dict[str, Any]] = []

    def settled(hid: str) -> bool:
        """Whether `hid` is decided already (no such hunk, or rejected before): its outcome says so."""
        if hid not in where:
            outcomes[hid] = HunkOutcome(
                hunk_id=hid, outcome="not_found", message="no such hunk in this session"
            )
        elif where[hid][0].status[hid] == "rejected":
            outcomes[hid] = HunkOutcome(hunk_id=hid, outcome="already_rejected", path=where[hid][0].path)
        else:
            return False
        return True

    for hid in accept:
        if not settled(hid):
            outcomes[hid] = HunkOutcome(hunk_id=hid, outcome="accepted", path=where[hid][0].path)
            decided.append({"hunkId": hid, "status": "accepted"})
    by_path: dict[str, list[tuple[ReviewedFile, Hunk]]] = {}
    for hid in reject:
        if not settled(hid):
            by_path.setdefault(where[hid][0].path, []).append(where[hid])
    rejected: list[tuple[ReviewedFile, Hunk]] = []
    for rel, pairs in by_path.items():
        problem = path_problem(workspace, rel)
        results = (
            {h.id: _refused(h, rel, problem) for _, h in pairs}
            if problem is not None
            else await _reject_in_file(fs, workspace / rel, rel, pairs)
        )
        for hid, outcome in results.items():
            outcomes[hid] = outcome
            if outcome.outcome == "rejected":
                decided.append({"hunkId": hid, "status": "rejected"})
                rejected.extend(p for p in pairs if p[1].id == hid)
    ordered = [outcomes[h] for h in dict.fromkeys([*accept, *reject])]
    if not decided:
        return ordered, None
    note = rejection_note(rejected) if rejected else None
    return ordered, new_entry("review_decision", tree.leaf_id, decisions=decided, note=note)


def _refused(hunk: Hunk, rel: str, problem: str) -> HunkOutcome:
    """A hunk whose recorded path is not inside the workspace: nothing read or written, it stays pending."""
    return HunkOutcome(hunk_id=hunk.id, outcome="conflict", path=rel, message=f"{problem}: nothing written")


async def _reject_in_file(
    fs: FileOps, path: Path, rel: str, pairs: list[tuple[ReviewedFile, Hunk]]
) -> dict[str, HunkOutcome]:
    """Revert these hunks of one file (one read, one write); a hunk whose lines are not there any more conflicts."""
    try:
        current = (await fs.read_bytes(path)).decode("utf-8") if await fs.exists(path) else None
    except (OSError, ValueError) as exc:
        return {
            h.id: HunkOutcome(
                hunk_id=h.id, outcome="conflict", path=rel, message=f"cannot read the file: {exc}"
            )
            for _, h in pairs
        }
    text, done = revert(current, [h for _, h in pairs])
    out = {
        h.id: HunkOutcome(
            hunk_id=h.id,
            outcome="rejected" if done[h.id] else "conflict",
            path=rel,
            message=None if done[h.id] else "the lines changed since the run: left as they are",
        )
        for _, h in pairs
    }
    if not any(done.values()):
        return out
    # A file the run created, all of whose hunks are now rejected and which is empty again, is removed.
    creator = pairs[0][0]
    all_rejected = creator.created and all(
        creator.status[h.id] == "rejected" or done.get(h.id, False) for h in creator.hunks
    )
    try:
        if all_rejected and text == "" and all(f is creator for f, _ in pairs):
            await fs.remove(path)
        else:
            await fs.write_bytes_atomic(path, text.encode("utf-8"))
    except OSError as exc:
        return {
            h.id: HunkOutcome(
                hunk_id=h.id, outcome="conflict", path=rel, message=f"cannot write the file: {exc}"
            )
            for _, h in pairs
        }
    return out


def rejection_note(rejected: Iterable[tuple[ReviewedFile, Hunk]]) -> str:
    """What the model is told: which of its changes the person rejected (they are reverted)."""
    lines = ["[Review] The user rejected these changes of yours; they have been reverted (do not redo them):"]
    for f, h in rejected:
        end = h.new_start + max(len(h.new_lines), 1) - 1
        shown = h.new_text.strip()
        shown = shown if len(shown) <= _NOTE_TEXT else shown[:_NOTE_TEXT] + "…"
        where = f"line {h.new_start}" if end == h.new_start else f"lines {h.new_start}-{end}"
        change = f"your text {shown!r}" if shown else "a removal"
        lines.append(f"- {f.path} {where} ({f.run_id}): {change}")
    return "\n".join(lines)


def pending_note(branch: Sequence[SessionEntry]) -> str | None:
    """Notes of rejections decided since the last message of this branch that no live run was told about."""
    notes: list[str] = []
    for entry in reversed(branch):
        if entry.type == "message":
            break
        if entry.type == "review_decision" and entry.data.get("note") and not entry.data.get("told"):
            notes.append(str(entry.data["note"]))
    return "\n\n".join(reversed(notes)) or None


def told(entry: SessionEntry) -> SessionEntry:
    """The decision entry marked as delivered to a live run (so the next prompt does not repeat it)."""
    return SessionEntry(
        id=entry.id,
        parent_id=entry.parent_id,
        type=entry.type,
        timestamp=entry.timestamp,
        data={**entry.data, "told": True},
    )
