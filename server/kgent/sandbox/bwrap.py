# Concept: the OS sandbox for shell commands — bubblewrap (Linux namespaces) around `bash -c`, giving one call only
# what it may touch. Stdlib only: the daemon's handshake reports the sandbox before the kernel is imported.
"""`detect()` picks the sandbox once per process: `Bubblewrap` when `bwrap` can create namespaces, else `NoSandbox`
(then the policy asks before every shell command). A `Grant` says what one call may touch; `wrap` returns the argv
and environment that run it inside those walls.

Inside, by default: system directories read-only, a private `/tmp`, no `$HOME`, no network, no `/proc`, a few devices
(null, zero, random…), the workspace read-only with its protected files (`.env*`, keys, `.git`, files with several
hard links) masked. An approved call also gets its own `/proc`, a full `/dev`, an empty writable `$HOME` with the
PATH's toolchains under it read-only, and what its grant adds (writing, outside paths, network)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kgent.files.gitdir import repository_dirs
from kgent.files.protected import ProtectedFiles
from kgent.sandbox.argv import Plan

# What stays visible (read-only) of the system, so tools work; anything else of the host is absent.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# Host secrets under those directories.
SYSTEM_SECRETS = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/ssh",
    "/etc/ssl/private",
)
# Variables that make a non-interactive bash run code before the command (BASH_ENV, ENV) or change how it reads.
_SHELL_STARTUP = frozenset(
    {"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND", "GLOBIGNORE", "IFS", "CDPATH"}
)
# The devices an allowlisted read may use (a full --dev costs a mount and a dozen nodes).
_MINIMAL_DEV = tuple(
    arg
    for dev in ("null", "zero", "full", "random", "urandom")
    for arg in ("--dev-bind", f"/dev/{dev}", f"/dev/{dev}")
)
# Past this many multi-link files in one directory, the directory is masked as a whole (fewer mounts).
MAX_MASKS_PER_DIR = 16


@dataclass(frozen=True, slots=True, kw_only=True)
class Grant:
    """What one shell call may touch inside the sandbox.

    `write`: the workspace is writable; `network`: the host's network; `outside`: absolute paths bound in (writable
    with `write`); `secrets`: protected files are not masked (the call was approved for one); `git`: `.git` is
    readable (writable with `write`) — its config and the user's git config only with `git_config`; `approved`:
    a person (or a remembered answer) approved the call, so PATH toolchains under `$HOME` are visible read-only and
    multi-link files are not masked; `plan`: for a call that runs unasked, the argvs the classifier judged — the
    bash tool runs exactly those, with no shell in between.
    """

    write: bool = False
    network: bool = False
    outside: tuple[str, ...] = ()
    secrets: bool = False
    git: bool = False
    git_config: bool = False
    approved: bool = False
    plan: Plan | None = None

    def describe(self) -> str:
        """One line for people: what the call runs with."""
        parts = ["workspace writable" if self.write else "workspace read-only"]
        parts.append("network" if self.network else "no network")
        if self.outside:
            parts.append("outside: " + ", ".join(self.outside))
        if not self.secrets:
            parts.append("protected files hidden")
        return ", ".join(parts)


class Sandbox(Protocol):
    """Runs shell commands with only what a Grant allows; `contains` is False for NoSandbox."""

    name: str
    contains: bool
    reason: str

    def wrap(
        self, argv: Sequence[str], *, workspace: Path, grant: Grant, env: Mapping[str, str]
    ) -> tuple[list[str], dict[str, str]]: ...


class NoSandbox:
    """No containment (bubblewrap missing, or switched off): commands run as they are, so every one is asked."""

    name = "none"
    contains = False

    def __init__(self, reason: str = "no sandbox") -> None:
        self.reason = reason

    def wrap(
        self, argv: Sequence[str], *, workspace: Path, grant: Grant, env: Mapping[str, str]
    ) -> tuple[list[str], dict[str, str]]:
        return list(argv), dict(env)


class Bubblewrap:
    """bubblewrap: new user, mount, pid, ipc, uts and network namespaces; capabilities dropped; dies with kgent."""

    name = "bwrap"
    contains = True

    def __init__(self, bwrap: str, *, reason: str = "bubblewrap") -> None:
        self.bwrap = bwrap
        self.reason = reason
        self._scans: dict[str, ProtectedFiles] = {}

    def wrap(
        self, argv: Sequence[str], *, workspace: Path, grant: Grant, env: Mapping[str, str]
    ) -> tuple[list[str], dict[str, str]]:
        ws = os.path.realpath(workspace)
        home = env.get("HOME") or os.path.expanduser("~")
        args = [self.bwrap, "--die-with-parent", "--unshare-all", "--cap-drop", "ALL"]
        if grant.network:
            args.append("--share-net")
        args += _system_mounts()
        if grant.approved:  # any program may run: a full /dev, its own /proc, a writable empty $HOME
            args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
            if _is_private_home(home, ws):
                args += ["--tmpfs", home]
                args += _ro_binds(_toolchains(env.get("PATH", ""), home))
        else:  # an allowlisted read: what it needs and no more (each mount costs; see bench/sandbox.py)
            args += [*_MINIMAL_DEV, "--tmpfs", "/tmp"]
        if grant.git_config:
            args += _ro_binds([os.path.join(home, ".gitconfig"), os.path.join(home, ".config", "git")])
        args += ["--bind" if grant.write else "--ro-bind", ws, ws]
        args += self._masks(ws, grant)
        for path in grant.outside:
            target = path if os.path.lexists(path) else os.path.dirname(path)
            if target and target != "/" and os.path.exists(target):
                args += ["--bind" if grant.write else "--ro-bind", target, target]
        args += ["--chdir", ws, "--"]
        child = dict(env)
        child["TMPDIR"] = "/tmp"
        # An unasked read runs the system's programs as the classifier read them: nothing planted in the workspace
        # on PATH, no startup file or exported function that could redefine `cat` or `git`.
        if not grant.approved:
            child["PATH"] = os.pathsep.join(
                p
                for p in env.get("PATH", "").split(os.pathsep)
                if os.path.isabs(p) and _under(os.path.realpath(p), ws) is None
            )
            for name in [n for n in child if n in _SHELL_STARTUP or n.startswith("BASH_FUNC_")]:
                del child[name]
        return args + list(argv), child

    def _masks(self, ws: str, grant: Grant) -> list[str]:
        out: list[str] = []
        git = os.path.join(ws, ".git")
        if not grant.git and not grant.secrets:
            out += _mask(git)
        elif os.path.lexists(git):
            out += _git_mounts(
                ws, writable=grant.write, config=grant.git_config or grant.secrets, approved=grant.approved
            )
        if grant.secrets:
            return out
        scan = self._scans.get(ws)
        if scan is None:
            scan = self._scans[ws] = ProtectedFiles(ws)
        found = scan.refresh()
        for rel in found.protected:
            out += _mask(os.path.join(ws, rel))
        if not grant.approved:
            for directory, names in found.hardlinked.items():
                if len(names) > MAX_MASKS_PER_DIR:
                    out += _mask(os.path.join(ws, directory))
                else:
                    for name in names:
                        out += _mask(os.path.join(ws, directory, name))
        return out


def _under(path: str, root: str) -> str | None:
    if path == root:
        return "."
    return path[len(root) + 1 :] if path.startswith(root.rstrip("/") + "/") else None


@functools.lru_cache(maxsize=1)
def _system_mounts() -> tuple[str, ...]:
    args: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    if os.geteuid() == 0:  # root (as in many containers) could read them; anyone else cannot anyway
        for secret in SYSTEM_SECRETS:
            if os.path.lexists(secret):
                args += _mask(secret)
    return tuple(args)


def _is_private_home(home: str, ws: str) -> bool:
    """Whether $HOME gets an empty tmpfs: not when it is `/`, a system directory, under /tmp (already private) or
    the workspace itself (or inside it)."""
    home = os.path.realpath(home) if home else ""
    if not home or home == "/" or _under(home, ws) is not None:
        return False
    return not any(_under(home, d) is not None for d in (*SYSTEM_DIRS, "/tmp", "/var/tmp"))


def _toolchains(path_env: str, home: str) -> list[str]:
    """The directories under $HOME that hold PATH's programs (~/.pyenv, ~/.cargo, ~/.local/bin and lib …)."""
    out: list[str] = []
    for entry in path_env.split(os.pathsep):
        rel = _under(os.path.realpath(entry), os.path.realpath(home)) if entry else None
        if rel is None or rel == ".":
            continue
        top = rel.split("/")[0]
        dirs = (
            [os.path.join(home, ".local", "bin"), os.path.join(home, ".local", "lib")]
            if top == ".local"
            else [os.path.join(home, top)]
        )
        out += [d for d in dirs if d not in out]
    return out


def _ro_binds(paths: Sequence[str]) -> list[str]:
    args: list[str] = []
    for path in paths:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args


def _mask(path: str) -> list[str]:
    """Hide a path: a directory becomes an empty read-only tmpfs, a file unreadable (the host's /dev/null, on a
    nodev mount)."""
    if os.path.isdir(path) and not os.path.islink(path):
        return ["--tmpfs", path, "--remount-ro", path]
    if os.path.lexists(path) and not os.path.islink(path):
        return ["--ro-bind", "/dev/null", path]
    return []


def _git_mounts(ws: str, *, writable: bool, config: bool, approved: bool) -> list[str]:
    """`.git` readable for git. A worktree's `.git` file (or a symlink) names git directories outside the workspace:
    they are bound in only for an approved call — an unasked one sees the workspace alone (the classifier made git
    in such a workspace an outside read, asked). The config (remote URLs may hold credentials) is empty unless
    allowed."""
    out: list[str] = []
    dirs = [d for d in repository_dirs(ws) if os.path.isdir(d)]
    visible = [d for d in dirs if _under(d, ws) is not None]
    if approved:
        for d in dirs:
            if d not in visible:
                out += ["--bind" if writable else "--ro-bind", d, d]
        visible = dirs
    if not config:
        for d in visible:
            if os.path.isfile(os.path.join(d, "config")):
                out += ["--ro-bind", _empty_file(), os.path.join(d, "config")]
    return out


@functools.lru_cache(maxsize=1)
def _empty_file() -> str:
    directory = tempfile.mkdtemp(prefix="kgent-sandbox-")
    path = os.path.join(directory, "empty")
    with open(path, "wb"):
        pass
    os.chmod(path, 0o444)
    return path


def _probe(bwrap: str) -> str | None:
    """None when bwrap can build a sandbox here, else why not (its first line of stderr)."""
    try:
        done = subprocess.run(
            [bwrap, "--die-with-parent", "--unshare-all", "--cap-drop", "ALL", "--ro-bind", "/", "/", "true"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap could not run: {exc}"
    if done.returncode != 0:
        first = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap cannot create namespaces here: {first[0] if first else f'exit {done.returncode}'}"
    return None


@functools.lru_cache(maxsize=8)
def _detect(choice: str) -> Sandbox:
    if choice in ("none", "off", "0", "false", "no"):
        return NoSandbox(f"switched off (KGENT_SANDBOX={choice})")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return NoSandbox("bubblewrap (bwrap) is not installed")
    problem = _probe(bwrap)
    if problem is not None:
        return NoSandbox(problem)
    return Bubblewrap(bwrap)


def detect(env: Mapping[str, str] | None = None) -> Sandbox:
    """The sandbox for this process (probed once): KGENT_SANDBOX=none switches it off; otherwise bubblewrap when it
    works here, else NoSandbox with the reason."""
    env = os.environ if env is None else env
    with _detecting:  # one probe, even when a prefetch is still running it
        return _detect((env.get("KGENT_SANDBOX") or "auto").strip().lower())


def prefetch(env: Mapping[str, str] | None = None) -> None:
    """Probe in a background thread now, so that the probe (a bwrap process, ~10 ms) overlaps a front's imports;
    `detect` then answers from the cache, or waits for this probe."""
    threading.Thread(target=detect, args=(env,), name="kgent-sandbox-probe", daemon=True).start()


_detecting = threading.Lock()
