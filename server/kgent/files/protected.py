# Concept: the protected files of a workspace tree — secrets by name (.env*, keys) and files with several hard links,
# found by a walk that re-reads only directories whose mtime changed since the last call.
"""`ProtectedFiles(root).refresh()` lists what the sandbox masks. `.git` is left to the caller (git needs it)."""

from __future__ import annotations

import os
import stat
import threading
import time
from dataclasses import dataclass, field

from kgent.files.audit import gated
from kgent.files.paths import is_protected_name


@dataclass(frozen=True, slots=True)
class Found:
    """Workspace-relative paths: `protected` by name (files or directories), `hardlinked` regular files by
    directory (directory → names)."""

    protected: tuple[str, ...] = ()
    hardlinked: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(slots=True)
class _Dir:
    mtime: int
    protected: tuple[str, ...]
    hardlinked: tuple[str, ...]
    subdirs: tuple[str, ...]


# A directory changed this recently may change again within the same timestamp tick (git's "racy" entries): it is
# read again next time rather than trusted from the cache.
RACY_NS = 2_000_000_000


class ProtectedFiles:
    """A cached walk of one tree. A directory's mtime changes whenever a name in it is added, removed or renamed,
    so an unchanged directory keeps its cached entries; a changed (or recently changed) one is read again."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._dirs: dict[str, _Dir] = {}
        self._lock = threading.Lock()  # calls of parallel runs refresh from worker threads

    def refresh(self) -> Found:
        """Walk the tree (symlinks are not followed; `.git` is skipped) and return what to mask (the files gate's
        own walk: its names decide what is protected)."""
        with self._lock, gated():
            return self._refresh()

    def _refresh(self) -> Found:
        protected: list[str] = []
        hardlinked: dict[str, tuple[str, ...]] = {}
        seen: set[str] = set()
        stack = ["."]
        while stack:
            rel = stack.pop()
            seen.add(rel)
            entry = self._read(rel)
            if entry is None:
                continue
            protected += [n if rel == "." else f"{rel}/{n}" for n in entry.protected]
            if entry.hardlinked:
                hardlinked[rel] = entry.hardlinked
            stack += [n if rel == "." else f"{rel}/{n}" for n in entry.subdirs]
        for gone in set(self._dirs) - seen:
            del self._dirs[gone]
        return Found(protected=tuple(protected), hardlinked=hardlinked)

    def _read(self, rel: str) -> _Dir | None:
        path = self.root if rel == "." else os.path.join(self.root, rel)
        try:
            mtime = os.stat(path, follow_symlinks=False).st_mtime_ns
        except OSError:
            return None
        cached = self._dirs.get(rel)
        if cached is not None and cached.mtime == mtime:
            return cached
        racy = time.time_ns() - mtime < RACY_NS
        protected: list[str] = []
        hardlinked: list[str] = []
        subdirs: list[str] = []
        try:
            with os.scandir(path) as it:
                for e in it:
                    name = e.name
                    if rel == "." and name == ".git":
                        continue
                    if is_protected_name((name,)):
                        protected.append(name)
                        continue
                    try:
                        if e.is_dir(follow_symlinks=False):
                            subdirs.append(name)
                        elif e.is_file(follow_symlinks=False):
                            st = e.stat(follow_symlinks=False)
                            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                                hardlinked.append(name)
                    except OSError:
                        continue
        except OSError:
            return None
        entry = _Dir(-1 if racy else mtime, tuple(protected), tuple(hardlinked), tuple(subdirs))
        self._dirs[rel] = entry
        return entry
