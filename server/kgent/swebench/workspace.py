# Concept: an instance's workspace — a clean checkout at base_commit made from a bare mirror, and its patch.
"""Mirrors are bare clones named `owner__name.git` in one directory; a missing one is cloned there first (once,
atomically). A workspace is a new repository that fetched `base_commit` by id from the mirror: it holds exactly the
objects reachable from that commit (all its history, or the last `depth` commits of it) and nothing else: no later
commit, no ref, no remote, no reflog, no FETCH_HEAD, no alternates, no pack shared with the mirror. The patch is
`git diff` against `base_commit`, new files included, so commits the agent made count too."""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from kgent.core.errors import KgentError
from kgent.swebench.instances import Instance

DEFAULT_CLONE_URL = "https://github.com/{repo}.git"
MAX_PATCH_BYTES = 10 * 1024 * 1024  # larger predictions are refused (seed: the Kernel's evaluator limit)
_GIT = ("git", "-c", "core.quotepath=false", "-c", "core.fsmonitor=false", "-c", "advice.detachedHead=false")
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}


class WorkspaceError(KgentError):
    """A workspace could not be prepared or read; the message says which step and what to do."""

    code = "workspace_failed"


@dataclass(frozen=True, slots=True)
class Patch:
    """The workspace's changes as one git patch ("" when nothing changed)."""

    text: str

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8", "surrogateescape"))

    @property
    def files(self) -> int:
        return sum(1 for line in self.text.splitlines() if line.startswith("diff --git "))


async def git(*args: str, cwd: Path | None = None, check: bool = True, input: str | None = None) -> str:
    """Run git; WorkspaceError with its stderr when it fails (and `check`)."""
    proc = await asyncio.create_subprocess_exec(
        *_GIT,
        *args,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL if input is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **_ENV},
    )
    out, err = await proc.communicate(None if input is None else input.encode("utf-8", "surrogateescape"))
    if check and proc.returncode != 0:
        detail = err.decode("utf-8", "replace").strip().splitlines()
        raise WorkspaceError(f"git {args[0]} failed: {detail[-1] if detail else f'exit {proc.returncode}'}")
    return out.decode("utf-8", "surrogateescape")


class Mirrors:
    """The bare clones (`owner__name.git`) in `root`; `clone_url` (with `{repo}`) fetches a missing one."""

    def __init__(self, root: Path, clone_url: str | None = DEFAULT_CLONE_URL) -> None:
        self.root = root
        self.clone_url = clone_url
        self._locks: dict[str, asyncio.Lock] = {}

    async def ensure(self, instance: Instance) -> Path:
        """The mirror of the instance's repo, cloned first if it is missing (one clone per repo at a time)."""
        path = self.root / instance.mirror_name
        lock = self._locks.setdefault(instance.repo, asyncio.Lock())
        async with lock:
            if path.is_dir():
                return path
            if self.clone_url is None:
                raise WorkspaceError(f"no mirror {path} (cloning is off): git clone --bare URL {path}")
            url = self.clone_url.format(
                repo=instance.repo, owner=instance.repo.split("/")[0], name=instance.repo.split("/")[1]
            )
            self.root.mkdir(parents=True, exist_ok=True)
            partial = self.root / f".{instance.mirror_name}.partial-{os.getpid()}"
            shutil.rmtree(partial, ignore_errors=True)
            try:
                await git("clone", "--quiet", "--bare", url, str(partial))
            except WorkspaceError as exc:
                shutil.rmtree(partial, ignore_errors=True)
                raise WorkspaceError(
                    f"cannot clone {url} into {path} ({exc.message}); put a bare clone there "
                    "(docs/swebench.md, 'Mirrors')"
                ) from None
            os.replace(partial, path)  # a kill mid-clone leaves only a .partial directory
            return path


async def prepare(instance: Instance, mirror: Path, workspace: Path, *, depth: int | None = None) -> None:
    """Make `workspace` a clean checkout of the instance's base_commit holding only its past (replacing what was
    there): `git init`, then fetch that one commit by id from `mirror` (its whole history, or `depth` commits)."""
    await asyncio.to_thread(_clear, workspace)
    commit = instance.base_commit
    await git("init", "--quiet", str(workspace))
    for key, value in _WORKSPACE_CONFIG:
        await git("config", key, value, cwd=workspace)
    fetch = [
        "-c",
        "uploadpack.allowAnySHA1InWant=true",
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
    ]
    if depth is not None:
        fetch.append(f"--depth={depth}")
    wanted = await _full_id(mirror, commit)
    if wanted is None:
        raise WorkspaceError(
            f"base_commit {commit} of {instance.instance_id} is not in {mirror}: update the mirror "
            f"(git -C {mirror} fetch origin '+refs/heads/*:refs/heads/*')"
        )
    await git(*fetch, str(mirror), wanted, cwd=workspace)
    await git("checkout", "--quiet", "--detach", wanted, cwd=workspace)
    for leftover in ("FETCH_HEAD", "ORIG_HEAD", "logs"):  # none is written; make sure
        await asyncio.to_thread(_remove, workspace / ".git" / leftover)
    head = (await git("rev-parse", "HEAD", cwd=workspace)).strip()
    if head != wanted:
        raise WorkspaceError(f"{instance.instance_id}: HEAD is {head}, not base_commit {commit}")
    dirty = await git("status", "--porcelain", "--untracked-files=all", cwd=workspace)
    if dirty.strip():
        raise WorkspaceError(f"{instance.instance_id}: the checkout at {commit} is not clean:\n{dirty[:500]}")


# A workspace's own settings: no reflog (nothing to find there but the base), no auto-gc mid-run, no shallow file
# rewrites by later fetches (there are none: no remote).
_WORKSPACE_CONFIG = (("core.logAllRefUpdates", "false"), ("gc.auto", "0"), ("advice.detachedHead", "false"))


async def _full_id(mirror: Path, commit: str) -> str | None:
    """The full id of `commit` (a full or abbreviated hash) in the mirror, or None when it has no such commit."""
    found = await git("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}", cwd=mirror, check=False)
    return found.strip() or None


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _clear(workspace: Path) -> None:
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.parent.mkdir(parents=True, exist_ok=True)


async def collect_patch(workspace: Path, base_commit: str) -> Patch:
    """Everything that differs from base_commit in the work tree: edits, new files (untracked ones too) and
    deletions, as `git diff --binary` text the harness applies with `git apply`."""
    await git("add", "--intent-to-add", "--all", ".", cwd=workspace)
    text = await git(
        "diff",
        "--binary",
        "--no-ext-diff",
        "--no-color",
        "--full-index",
        base_commit,
        "--",
        ".",
        cwd=workspace,
    )
    return Patch(text)


def check_patch(patch: Patch) -> str | None:
    """Why the harness could not use this patch, or None when it can (an empty patch is fine: it scores 0)."""
    if not patch.text:
        return None
    if patch.size > MAX_PATCH_BYTES:
        return f"the patch is {patch.size} bytes, over the {MAX_PATCH_BYTES} byte limit"
    if "\x00" in patch.text:
        return "the patch holds a NUL byte"
    if not patch.text.startswith("diff --git a/"):
        return "the patch does not start with a 'diff --git' header"
    if not patch.text.endswith("\n"):
        return "the patch does not end with a newline"
    return None
