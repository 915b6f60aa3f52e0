# Concept: change tracking — what a run changed in the workspace, as paths and one git-style patch.
"""`ChangeTracker`: git tree snapshots (via a temporary index) when the workspace is a git work tree, else the
originals tools recorded before writing."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

from kgent.changes.diffs import file_patch
from kgent.files import gate
from kgent.files.ops import TEMP_SUFFIX, FileOps
from kgent.files.paths import classify_path

_ANY_SIZE = 1 << 62  # the tracker reads a written file whole (large ones become a "large file" section)

_GIT_CONFIG = ("-c", "core.quotepath=false", "-c", "core.splitIndex=false", "-c", "core.fsmonitor=false")
# Untracked files above this size stay out of the snapshots: hashing them would slow every run's start and end
# and leave their blobs in the repository's object store. One that a tool wrote, or that grew past the limit during
# the run, is named as changed without its contents; other changes to them go unreported.
MAX_SNAPSHOT_FILE = 4 * 1024 * 1024


class _GitFailed(Exception):
    pass


class ChangeTracker:
    """Tracks one run's changes. Never touches the user's real git index."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = Path(os.path.abspath(workspace))
        self._originals: dict[str, bytes | None] = {}
        self._git = shutil.which("git")
        self._start_tree: str | None = None
        self._index_dir: str | None = None  # the run's own index: both snapshots, the real index untouched
        self._skipped: set[str] = set()  # large untracked files left out of the start snapshot
        self._prefix = ""  # the workspace's path in its repository ("" at the top, else ending in "/")

    @property
    def uses_git(self) -> bool:
        """Whether a git baseline was taken."""
        return self._start_tree is not None

    async def start(self) -> None:
        """Take the baseline: a tree of the work tree as it is now (uncommitted state included), if git is usable."""
        self._start_tree = None
        if self._git is None:
            return
        try:
            args = ("rev-parse", "--is-inside-work-tree", "--git-path", "index", "--show-prefix")
            out = (await self._run_git(*args)).split(b"\n")
            if out[0].strip() == b"true":
                self._prefix = out[2].decode("utf-8", "surrogateescape").strip() if len(out) > 2 else ""
                self._skipped, _ = await asyncio.gather(self._large_untracked(), self._open_index(out[1]))
                self._start_tree = await self._snapshot(self._skipped)
        except (_GitFailed, OSError):
            self._start_tree = None
            self._close_index()

    async def record_before(self, abs_path: Path, fs: FileOps) -> None:
        """Remember a file's original bytes (None when absent) the first time a tool is about to write it."""
        where = classify_path(self.workspace, str(abs_path))
        if not where.inside or where.rel in self._originals:
            return
        try:
            original = await fs.read_bytes(where.abs) if await fs.exists(where.abs) else None
        except IsADirectoryError:
            return
        self._originals.setdefault(where.rel, original)

    async def finish(self) -> tuple[tuple[str, ...], str]:
        """(changed workspace-relative paths, unified patch) since start()."""
        paths: list[str] = []
        patch = ""
        grown: list[str] = []  # small at the start, too large now: in the start tree, left out of the end one
        git_sections = self._start_tree is not None
        if self._start_tree is not None:
            try:
                if await self._only_recorded_changes():  # the originals tell it all: no snapshot, no git diff
                    return self._with_originals([], "", [], git_sections=False)
                large = await self._large_untracked()
                grown = sorted(large - self._skipped)
                paths, patch = await self._git_diff(self._start_tree, self._skipped | large)
            except (_GitFailed, OSError):
                paths, patch, grown = [], "", []
                self._start_tree = None
                git_sections = False
            finally:
                self._close_index()
        return self._with_originals(paths, patch, grown, git_sections)

    async def _only_recorded_changes(self) -> bool:
        """Whether every path that differs from the start snapshot is one a tool recorded before writing it: one
        `git status` of the work tree against the run's index (which holds the start snapshot, stat data fresh)."""
        args = ("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", ".")
        out = await self._run_git(*args, env=self._index_env())
        for item in out.decode("utf-8", "surrogateescape").split("\0"):
            if not item:
                continue
            state, path = item[:2], item[3:]
            if state != "??" and state[1] == " ":
                continue  # differs from HEAD only: the start snapshot has it as it is
            if path.endswith(TEMP_SUFFIX):
                continue  # a write in flight (another run's, a moment from its rename): left out of the snapshots
            if not path.startswith(self._prefix) or path[len(self._prefix) :] not in self._originals:
                return False
        return True

    def _with_originals(
        self, paths: list[str], patch: str, grown: list[str], git_sections: bool
    ) -> tuple[tuple[str, ...], str]:
        """Add the sections of files tools wrote that git did not report (`git_sections`: it reported the rest)."""
        seen = set(paths)
        extra = [_large_section(rel) for rel in grown if rel not in self._originals]
        paths.extend(rel for rel in grown if rel not in self._originals)
        for rel in sorted(self._originals):
            if rel in seen and git_sections:
                continue
            old, new = self._originals[rel], self._current(rel)
            if old != new and max(len(old or b""), len(new or b"")) > MAX_SNAPSHOT_FILE:
                section = _large_section(rel)  # difflib over megabytes would take minutes
            else:
                section = file_patch(rel, old, new)
            if section:
                paths.append(rel)
                extra.append(section)
        return tuple(sorted(set(paths))), patch + "".join(extra)

    def _current(self, rel: str) -> bytes | None:
        """A file a tool wrote, as it is now (through the files gate: the run was approved to change it)."""
        try:
            return gate.read_head(self.workspace, rel, limit=_ANY_SIZE, protected_ok=True)[0]
        except OSError:  # absent, a directory now, or refused (it moved outside)
            return None

    async def _git_diff(self, start: str, skip: set[str]) -> tuple[list[str], str]:
        await self._add(skip)  # the run's index now holds the end state: diff the start tree against it
        env = self._index_env()
        common = ("--cached", "--no-renames", "--no-ext-diff", "--no-textconv", "--relative", start)
        names, patch = await asyncio.gather(
            self._run_git("diff", "--name-only", "-z", *common, env=env),
            self._run_git(
                "diff", "--no-color", "--binary", "--src-prefix=a/", "--dst-prefix=b/", *common, env=env
            ),
        )
        paths = [p for p in names.decode("utf-8", "surrogateescape").split("\0") if p]
        return paths, patch.decode("utf-8", "replace")

    async def _open_index(self, git_path: bytes) -> None:
        """A private copy of the real index (its warm stat cache keeps `git add` fast), kept for the run: the end
        snapshot starts from the start snapshot, so untracked files hashed then are not hashed again."""
        self._index_dir = tempfile.mkdtemp(prefix="kgent-index-")
        real = git_path.decode().strip()
        real_path = Path(real) if os.path.isabs(real) else self.workspace / real
        _copy_index(self.workspace, real_path, Path(self._index_dir, "index"))

    def _close_index(self) -> None:
        if self._index_dir is not None:
            shutil.rmtree(self._index_dir, ignore_errors=True)
            self._index_dir = None

    def _index_env(self) -> dict[str, str]:
        assert self._index_dir is not None
        return {"GIT_INDEX_FILE": os.path.join(self._index_dir, "index")}

    async def _large_untracked(self) -> set[str]:
        """Workspace-relative files untracked in the real index (not ignored) and larger than MAX_SNAPSHOT_FILE."""
        out = await self._run_git("ls-files", "-z", "--others", "--exclude-standard", "--", ".")
        large: set[str] = set()
        for rel in out.decode("utf-8", "surrogateescape").split("\0"):
            if not rel:
                continue
            try:
                if os.lstat(self.workspace / rel).st_size > MAX_SNAPSHOT_FILE:
                    large.add(rel)
            except OSError:
                continue
        return large

    async def _snapshot(self, skip: set[str]) -> str:
        """The workspace as a tree (untracked files included, `skip` left as the index has them)."""
        await self._add(skip)
        return (await self._run_git("write-tree", env=self._index_env())).decode().strip()

    async def _add(self, skip: set[str]) -> None:
        """The run's index updated to the work tree (untracked files included, `skip` left as they are)."""
        # Kgent's own writes in flight (`.NAME.RANDOM.kgent-tmp`, renamed over NAME a moment later — by a run beside
        # this one) are in no snapshot: they would be a file this run created, or deleted.
        excludes = [f":(exclude,glob)**/.*{TEMP_SUFFIX}"]
        excludes += [f":(exclude,literal){rel}" for rel in sorted(skip)]
        await self._run_git(
            "add", "-A", "--ignore-errors", "--", ".", *excludes, env=self._index_env(), ok_codes=(0, 1)
        )

    async def _run_git(
        self, *args: str, env: dict[str, str] | None = None, ok_codes: tuple[int, ...] = (0,)
    ) -> bytes:
        assert self._git is not None
        full_env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", **(env or {})}
        proc = await asyncio.create_subprocess_exec(
            self._git,
            *_GIT_CONFIG,
            *args,
            cwd=self.workspace,
            env=full_env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await proc.communicate()
        except asyncio.CancelledError:
            if proc.returncode is None:
                proc.kill()
            raise
        if proc.returncode not in ok_codes:
            raise _GitFailed(
                f"git {args[0]} failed ({proc.returncode}): {err.decode('utf-8', 'replace').strip()}"
            )
        return out


def _large_section(rel: str) -> str:
    """A file too large to diff: named as changed, its contents not shown (git's form for unshown contents)."""
    return f"diff --git a/{rel} b/{rel}\nBinary files a/{rel} and b/{rel} differ\n"


def _copy_index(workspace: Path, index: Path, to: Path) -> None:
    """Copy git's own index (wherever git keeps it), read through the files gate; nothing when there is none."""
    try:
        data = gate.read_head(workspace, index, limit=_ANY_SIZE, outside_ok=True, protected_ok=True)[0]
    except OSError:
        return
    to.write_bytes(data)
