# Concept: change tracking — what a run changed in the workspace, as paths and one git-style patch.
"""`ChangeTracker`: git tree snapshots (via a temporary index) when the workspace is a git work tree, else the
originals tools recorded before writing."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

from kgent.tools.diffs import file_patch
from kgent.tools.ops import FileOps
from kgent.tools.paths import classify_path

_GIT_CONFIG = ("-c", "core.quotepath=false", "-c", "core.splitIndex=false", "-c", "core.fsmonitor=false")


class _GitFailed(Exception):
    pass


class ChangeTracker:
    """Tracks one run's changes. Never touches the user's real git index."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = Path(os.path.abspath(workspace))
        self._originals: dict[str, bytes | None] = {}
        self._git = shutil.which("git")
        self._start_tree: str | None = None

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
            out = await self._run_git("rev-parse", "--is-inside-work-tree")
            if out.strip() == b"true":
                self._start_tree = await self._snapshot()
        except (_GitFailed, OSError):
            self._start_tree = None

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
        if self._start_tree is not None:
            try:
                paths, patch = await self._git_diff(self._start_tree)
            except (_GitFailed, OSError):
                paths, patch = [], ""
                self._start_tree = None
        seen = set(paths)
        extra: list[str] = []
        for rel in sorted(self._originals):
            if rel in seen and self._start_tree is not None:
                continue
            section = file_patch(rel, self._originals[rel], self._current(rel))
            if section:
                paths.append(rel)
                extra.append(section)
        return tuple(sorted(set(paths))), patch + "".join(extra)

    def _current(self, rel: str) -> bytes | None:
        path = self.workspace / rel
        try:
            return path.read_bytes() if path.is_file() else None
        except OSError:
            return None

    async def _git_diff(self, start: str) -> tuple[list[str], str]:
        end = await self._snapshot()
        common = ("--no-renames", "--no-ext-diff", "--no-textconv", "--relative", start, end)
        names = await self._run_git("diff", "--name-only", "-z", *common)
        patch = await self._run_git(
            "diff", "--no-color", "--binary", "--src-prefix=a/", "--dst-prefix=b/", *common
        )
        paths = [p for p in names.decode("utf-8", "surrogateescape").split("\0") if p]
        return paths, patch.decode("utf-8", "replace")

    async def _snapshot(self) -> str:
        tmp = tempfile.mkdtemp(prefix="kgent-index-")
        try:
            index = os.path.join(tmp, "index")
            real = (await self._run_git("rev-parse", "--git-path", "index")).decode().strip()
            real_path = Path(real) if os.path.isabs(real) else self.workspace / real
            if real_path.is_file():
                shutil.copyfile(real_path, index)  # a warm stat cache keeps `git add -A` fast
            env = {"GIT_INDEX_FILE": index}
            await self._run_git("add", "-A", "--ignore-errors", env=env, ok_codes=(0, 1))
            return (await self._run_git("write-tree", env=env)).decode().strip()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    async def _run_git(self, *args: str, env: dict[str, str] | None = None, ok_codes: tuple[int, ...] = (0,)) -> bytes:
        assert self._git is not None
        full_env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", **(env or {})}
        proc = await asyncio.create_subprocess_exec(
            self._git, *_GIT_CONFIG, *args, cwd=self.workspace, env=full_env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await proc.communicate()
        except asyncio.CancelledError:
            if proc.returncode is None:
                proc.kill()
            raise
        if proc.returncode not in ok_codes:
            raise _GitFailed(f"git {args[0]} failed ({proc.returncode}): {err.decode('utf-8', 'replace').strip()}")
        return out
