# Concept: an instance's workspace — a clean checkout at base_commit made from a bare mirror, and its patch.
"""Mirrors are bare clones named `owner__name.git` in one directory; a missing one is cloned there first (once,
atomically). A workspace is a local clone of the mirror, detached at `base_commit`, with every ref but HEAD removed
so the fix's future commits are not reachable by `git log --all`. The patch is `git diff` against `base_commit`,
new files included, so commits the agent made count too."""

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


async def prepare(instance: Instance, mirror: Path, workspace: Path) -> None:
    """Make `workspace` a clean checkout of `mirror` at the instance's base_commit (replacing what was there)."""
    await asyncio.to_thread(_clear, workspace)
    await git("clone", "--quiet", "--no-checkout", str(mirror), str(workspace))
    commit = instance.base_commit
    found = await git("cat-file", "-t", commit, cwd=workspace, check=False)
    if found.strip() != "commit":
        raise WorkspaceError(
            f"base_commit {commit} of {instance.instance_id} is not in {mirror}: update the mirror "
            f"(git -C {mirror} fetch origin '+refs/heads/*:refs/heads/*')"
        )
    await git("checkout", "--quiet", "--detach", commit, cwd=workspace)
    await git("remote", "remove", "origin", cwd=workspace, check=False)
    refs = await git("for-each-ref", "--format=delete %(refname)", cwd=workspace)
    if refs.strip():
        await git("update-ref", "--no-deref", "--stdin", cwd=workspace, input=refs)
    await git("reflog", "expire", "--expire=now", "--all", cwd=workspace)
    head = (await git("rev-parse", "HEAD", cwd=workspace)).strip()
    if not head.startswith(commit):
        raise WorkspaceError(f"{instance.instance_id}: HEAD is {head}, not base_commit {commit}")
    dirty = await git("status", "--porcelain", "--untracked-files=all", cwd=workspace)
    if dirty.strip():
        raise WorkspaceError(f"{instance.instance_id}: the checkout at {commit} is not clean:\n{dirty[:500]}")


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
