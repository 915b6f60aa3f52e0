"""The project's instructions, a resource of the context: `AGENTS.md` (or `CLAUDE.md` where a directory has no
AGENTS.md) at the workspace root, in the directories a run touches, and the user's own in the user config dir.

What was loaded is recorded in the session as `instructions` entries ({files: [...]}, each file with its text), so a
resume knows what the model was told; `render` turns an entry's files into the message the model gets (a pure,
deterministic function: the same entry is the same bytes on every request). File reads happen in `InstructionSet`,
through the files gate: an instruction file that is (or links to) a protected, hard-linked or outside file is left
out, never read, and named with the reason (`Skipped`) for the `instructions` event.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from kgent.files import gate

FILE_NAMES = (
    "AGENTS.md",
    "CLAUDE.md",
)  # in order of preference: CLAUDE.md only where a directory has no AGENTS.md
MAX_BYTES = 32 * 1024  # per file; the rest is cut, with a note saying so
ENTRY_TYPE = "instructions"

Source = Literal["user", "project", "directory"]
Change = Literal["new", "changed", "removed"]
_ORDER: dict[str, int] = {"user": 0, "project": 1, "directory": 2}


@dataclass(frozen=True, slots=True, kw_only=True)
class InstructionFile:
    """One instruction file as loaded: its absolute path, where it applies from, its (possibly cut) text."""

    path: str
    source: Source
    text: str = ""
    sha256: str = ""
    size: int = 0  # bytes on disk
    mtime_ns: int = 0
    truncated: bool = False
    change: Change = "new"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "source": self.source,
            "text": self.text,
            "sha256": self.sha256,
            "size": self.size,
            "mtimeNs": self.mtime_ns,
            "truncated": self.truncated,
            "change": self.change,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> InstructionFile:
        source = d.get("source")
        change = d.get("change")
        return cls(
            path=str(d.get("path", "")),
            source=source if source in ("user", "project", "directory") else "directory",
            text=str(d.get("text", "")),
            sha256=str(d.get("sha256", "")),
            size=int(d.get("size", 0)),
            mtime_ns=int(d.get("mtimeNs", 0)),
            truncated=bool(d.get("truncated", False)),
            change=change if change in ("new", "changed", "removed") else "new",
        )


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file Kgent would have loaded (an instruction file, a skill) that the files gate refused: never read."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


def entry_files(data: Mapping[str, Any]) -> list[InstructionFile]:
    """The files of an `instructions` entry's data (a malformed item is skipped: readers ignore what they can't use)."""
    files = data.get("files")
    if not isinstance(files, list):
        return []
    return [InstructionFile.from_dict(f) for f in files if isinstance(f, dict) and f.get("path")]


def _heading(f: InstructionFile) -> str:
    where = {
        "user": "the user's own instructions, for every project",
        "project": "the project's instructions, for the whole workspace",
        "directory": f"instructions for files under {os.path.dirname(f.path)}",
    }[f.source]
    if f.change == "removed":
        return f"## {f.path} (deleted)\nThis file no longer exists: its earlier instructions no longer apply."
    note = (
        " It changed since it was loaded: this text replaces the earlier one."
        if f.change == "changed"
        else ""
    )
    return f"## {f.path} ({where}).{note}"


def render(files: Sequence[InstructionFile]) -> str:
    """The message the model gets for `files` (ordered general → specific by `ordered`)."""
    parts = [
        "<instructions>",
        "Instructions from AGENTS.md files (CLAUDE.md where a directory has none). They are ordered from general "
        "to specific: where they disagree, the later one (nearer to the files it is about) wins. The user's "
        "messages in this conversation override them all.",
    ]
    for f in ordered(files):
        parts.append("")
        parts.append(_heading(f))
        if f.change != "removed":
            parts.append(f.text.rstrip("\n"))
            if f.truncated:
                parts.append(
                    f"[kgent: this file is {f.size} bytes; only its first {MAX_BYTES} bytes are shown. "
                    "Read the file for the rest.]"
                )
    parts.append("</instructions>")
    return "\n".join(parts)


def ordered(files: Iterable[InstructionFile]) -> list[InstructionFile]:
    """General → specific: the user's file, the project root's, then directories from shallow to deep."""
    return sorted(files, key=lambda f: (_ORDER[f.source], f.path.count(os.sep), f.path))


def latest(entries_data: Iterable[Mapping[str, Any]]) -> dict[str, InstructionFile]:
    """The current state of each file across `instructions` entries, oldest first (removed files left out)."""
    state: dict[str, InstructionFile] = {}
    for data in entries_data:
        for f in entry_files(data):
            if f.change == "removed":
                state.pop(f.path, None)
            else:
                state[f.path] = f
    return state


def read_instruction(
    path: Path, source: Source, *, within: Path, outside_ok: bool = False
) -> InstructionFile | Skipped | None:
    """Load one file through the files gate: None when it is missing or unreadable, Skipped when the gate refuses
    it (a link to a secret, to `.git` internals or — unless `outside_ok`, the user's own file — outside `within`;
    more than one hard link; not a regular file): such a file never reaches the model."""
    try:
        data, st = gate.read_head(within, path, limit=MAX_BYTES, outside_ok=outside_ok)
    except gate.Refused as refused:
        return Skipped(path=str(path), reason=refused.reason)
    except (OSError, ValueError):
        return None
    truncated = len(data) > MAX_BYTES or st.st_size > MAX_BYTES
    kept = data[:MAX_BYTES]
    return InstructionFile(
        path=str(path),
        source=source,
        text=kept.decode("utf-8", errors="replace"),
        sha256=hashlib.sha256(kept).hexdigest(),
        size=max(st.st_size, len(data)),
        mtime_ns=st.st_mtime_ns,
        truncated=truncated,
    )


def dir_file(directory: Path) -> Path | None:
    """The instruction file of one directory: its AGENTS.md, else its CLAUDE.md, else None."""
    for name in FILE_NAMES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


@dataclass(slots=True)
class InstructionSet:
    """What one run knows about the instruction files: the state recorded in its branch, and where to look.

    `start()` gives the files to record when the run opens (new, changed or removed since the branch recorded them);
    `touched(paths)` those of the directories between the workspace root and the paths a tool call touched.
    """

    workspace: Path
    user_dir: Path | None
    known: dict[str, InstructionFile] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)  # refused since the last `take_skipped`
    _refused: dict[str, tuple[int, int]] = field(default_factory=dict)  # path → (size, mtime) when refused

    def take_skipped(self) -> list[Skipped]:
        """The files refused since the last call (each named once, until it changes)."""
        taken, self.skipped = self.skipped, []
        return taken

    def start(self) -> list[InstructionFile]:
        found: list[InstructionFile] = []
        if self.user_dir is not None:  # the user's own file may link to their dotfiles, not to a secret
            found += self._check(self.user_dir, "user", within=self.user_dir, outside_ok=True)
        found += self._check(self.workspace, "project", within=self.workspace)
        for path in sorted(p for p, f in self.known.items() if f.source == "directory"):
            found += self._check(Path(path).parent, "directory", within=self.workspace)
        return self._remember(found)

    def touched(self, paths: Iterable[str]) -> list[InstructionFile]:
        """`paths` as the tools got them (relative to the workspace, or absolute); outside ones are ignored."""
        found: list[InstructionFile] = []
        seen: set[Path] = set()
        root = self.workspace
        for raw in paths:
            target = Path(os.path.normpath(root / raw))
            if not target.is_relative_to(root):
                continue
            directory = target if target.is_dir() else target.parent
            chain = [directory, *directory.parents]
            for d in reversed([c for c in chain if c.is_relative_to(root)]):
                if d in seen:
                    continue
                seen.add(d)
                found += self._check(d, "project" if d == root else "directory", within=root)
        return self._remember(found)

    def _check(
        self, directory: Path, source: Source, *, within: Path, outside_ok: bool = False
    ) -> list[InstructionFile]:
        """The directory's file if it is new or changed; the removal of a known one that is gone."""
        current = dir_file(directory)
        known_here = [f for p, f in self.known.items() if Path(p).parent == directory and f.source == source]
        out: list[InstructionFile] = [
            InstructionFile(path=f.path, source=f.source, change="removed")
            for f in known_here
            if current is None or f.path != str(current)
        ]
        if current is None:
            return out
        before = self.known.get(str(current))
        if before is not None:
            try:
                st = current.stat()
            except OSError:
                return out
            if st.st_size == before.size and st.st_mtime_ns == before.mtime_ns:
                return out
        loaded = read_instruction(current, source, within=within, outside_ok=outside_ok)
        if isinstance(loaded, Skipped):
            self._skip(current, loaded)
            return out
        if loaded is None:
            return out
        if before is not None:
            if loaded.sha256 == before.sha256:  # touched, not changed: remember the new stat, say nothing
                self.known[loaded.path] = loaded
                return out
            loaded = replace(loaded, change="changed")
        return [*out, loaded]

    def _skip(self, path: Path, skipped: Skipped) -> None:
        try:
            st = path.stat()
            key = (st.st_size, st.st_mtime_ns)
        except OSError:
            key = (-1, -1)
        if self._refused.get(skipped.path) != key:
            self._refused[skipped.path] = key
            self.skipped.append(skipped)

    def _remember(self, files: list[InstructionFile]) -> list[InstructionFile]:
        for f in files:
            if f.change == "removed":
                self.known.pop(f.path, None)
            else:
                self.known[f.path] = f
        return ordered(files)
