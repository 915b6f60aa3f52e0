"""RunReview: a run's review set — per file it changed, the hunks — kept beside the run's change tracking.

It wraps any ChangeTracking (only its public `start` / `record_before` / `finish`): files a write tool touched are
diffed from the text the tool saw before its first write (through the run's FileOps, so an unsaved buffer counts)
to their text at the end; files only a shell command changed come from the tracker's patch. The set becomes a
`review` session entry when the run ends (docs/session-format.md). Runs at once in one workspace: a file that a
run live at the same time wrote with its write tools is that run's, though this run's git snapshots see it too.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kgent.changes.diffs import file_patch
from kgent.changes.hunks import Hunk, compute_hunks, patch_sections, reverse_patch
from kgent.files.gatedops import GatedFiles
from kgent.files.ops import FileOps, LocalFileOps
from kgent.files.paths import classify_path
from kgent.tools.base import ChangeTracking

MAX_REVIEW_BYTES = 2 * 1024 * 1024  # larger files are named as changed, without hunks


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewFile:
    """One changed file of a run: workspace-relative path, whether the run created or deleted it, its hunks, and
    the SHA-256 of its text before the run (None when created): a rewind checks its reverted text against it."""

    path: str
    created: bool
    deleted: bool
    hunks: tuple[Hunk, ...]
    before_sha: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "created": self.created,
            "deleted": self.deleted,
            "hunks": [h.to_dict() for h in self.hunks],
        }
        if self.before_sha is not None:
            out["beforeSha"] = self.before_sha
        return out


def text_sha(text: str) -> str:
    """The SHA-256 (hex) of a text's UTF-8 bytes: how review entries remember a file's text before a run."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def _text(fs: FileOps, path: Path) -> str | None:
    """A file's text; None when absent; raises ValueError for a binary or too large file."""
    if not await fs.exists(path) or await fs.is_dir(path):
        return None
    if await fs.size(path) > MAX_REVIEW_BYTES:
        raise ValueError("too large")
    data = await fs.read_bytes(path)
    if b"\x00" in data:
        raise ValueError("binary")
    return data.decode("utf-8")  # UnicodeDecodeError is a ValueError: not reviewable


@dataclass(slots=True)
class _Writer:
    """A run's record in `_WRITERS`: the files its write tools wrote, the runs live at the same time as it."""

    paths: set[str]
    overlapping: set[str]
    ended: bool = False


# Per workspace, the runs of this process that wrote files there and may have overlapped a live run. Another run's
# git snapshots see those writes too: they are that run's, not the one finishing (the VS Code panel plus Run Task).
_WRITERS: dict[Path, dict[str, _Writer]] = {}


def _others_writes(workspace: Path, run_id: str) -> set[str]:
    """The files written by runs that were live at the same time as `run_id`; forgets what no live run needs."""
    runs = _WRITERS.get(workspace, {})
    me = runs.get(run_id)
    if me is None:
        return set()
    me.ended = True
    others = {p for r in me.overlapping if r in runs for p in runs[r].paths}
    for rid in [r for r, w in runs.items() if w.ended and all(runs.get(o, w).ended for o in w.overlapping)]:
        del runs[rid]
    if not runs:
        _WRITERS.pop(workspace, None)
    return others


class RunReview:
    """ChangeTracking that also records what a review needs; `files` is set by `finish`."""

    def __init__(self, inner: ChangeTracking, fs: FileOps, workspace: Path, run_id: str) -> None:
        self.inner = inner
        # the files the run changed, for the person's review: through the gate, protected ones included (the run
        # was approved to change them), nothing outside the workspace
        self.fs = GatedFiles(fs, workspace, protected_ok=True)
        self.workspace = workspace
        self.run_id = run_id
        self._before: dict[str, str | None] = {}  # rel → text before the run's first write ('' → unreadable)
        self._unreviewable: set[str] = set()
        self.files: list[ReviewFile] = []
        self.unreviewed: list[str] = []  # changed paths without hunks (binary, too large, unreadable)

    async def start(self) -> None:
        runs = _WRITERS.setdefault(self.workspace, {})
        live = {r for r, w in runs.items() if not w.ended}
        for r in live:
            runs[r].overlapping.add(self.run_id)
        runs[self.run_id] = _Writer(paths=set(), overlapping=live)
        await self.inner.start()

    async def record_before(self, abs_path: Path, fs: FileOps) -> None:
        await self.inner.record_before(abs_path, fs)
        where = classify_path(self.workspace, str(abs_path))
        if not where.inside or where.rel in self._before or where.rel in self._unreviewable:
            return
        writer = _WRITERS.get(self.workspace, {}).get(self.run_id)
        if writer is not None:
            writer.paths.add(where.rel)
        try:
            self._before[where.rel] = await _text(fs, where.abs)
        except (ValueError, OSError):
            self._unreviewable.add(where.rel)

    async def finish(self) -> tuple[tuple[str, ...], str]:
        """The tracker's paths and patch, where the files the write tools touched are told as those tools saw them
        (through the run's FileOps: a change that sits unsaved in an editor's buffer counts, and a buffer's unsaved
        text from before the run does not); builds `files`."""
        try:
            paths, patch = await self.inner.finish()
        finally:
            theirs = _others_writes(self.workspace, self.run_id) - set(self._before)
        paths = tuple(p for p in paths if p not in theirs)
        changed = set(paths)
        sections = {rel: s for rel, s in patch_sections(patch).items() if rel not in theirs}
        texts: dict[str, tuple[str | None, str | None]] = {}
        for rel, before in self._before.items():
            try:
                after = await _text(self.fs, self.workspace / rel)
            except (ValueError, OSError):
                continue
            if after != before:
                texts[rel] = (before, after)
                changed.add(rel)
                sections[rel] = file_patch(rel, _bytes(before), _bytes(after))
            else:
                changed.discard(rel)
                sections.pop(rel, None)
        disk = GatedFiles(LocalFileOps(), self.workspace, protected_ok=True)
        for rel in sorted(set(paths) - set(self._before) - self._unreviewable):
            section = sections.get(rel)
            if section is None:
                continue
            try:
                pair = reverse_patch(await _text(disk, self.workspace / rel), section)
            except (ValueError, OSError):
                continue
            if pair is not None:
                texts[rel] = pair
        n = 0
        for rel in sorted(texts):
            before, after = texts[rel]
            hunks = tuple(
                replace(h, id=f"{self.run_id}.{n + k + 1}")
                for k, h in enumerate(compute_hunks(before, after))
            )
            n += len(hunks)
            if hunks or before is None or after is None:
                self.files.append(
                    ReviewFile(
                        path=rel,
                        created=before is None,
                        deleted=after is None,
                        hunks=hunks,
                        before_sha=None if before is None else text_sha(before),
                    )
                )
        self.unreviewed = sorted(changed - set(texts))
        return tuple(sorted(changed)), "".join(sections.values())

    def entry_data(self) -> dict[str, Any] | None:
        """The `review` entry's data, or None when the run changed nothing. `unreviewed`: the changed files it has no
        hunks for (binary, too large, unreadable), so a rewind can say it cannot restore them."""
        if not self.files and not self.unreviewed:
            return None
        data: dict[str, Any] = {"runId": self.run_id, "files": [f.to_dict() for f in self.files]}
        if self.unreviewed:
            data["unreviewed"] = self.unreviewed
        return data


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")
