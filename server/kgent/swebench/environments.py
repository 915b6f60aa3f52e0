# Concept: where an instance's commands run — `local` (bubblewrap around the workspace) or `docker` (the harness's
# per-instance image) — and the tools that keep the file tools inside the workspace too.
"""An `Environment` opens, per instance, a `CommandRunner` for the bash tool (kgent.tools.base) and closes it when
the instance ends. Both environments run every command confined, whatever the kernel's mode:

- `local`: `bwrap` with new user, mount, PID, IPC, UTS (and, unless `network`, network) namespaces; the workspace
  read-write; /usr, /bin, /lib*, /etc, /opt read-only (minus the host's secrets); a private /tmp, /proc and /dev;
  nothing else of the host — no mirrors, output directory, other workspaces, trajectories or home. The command's
  environment is built from nothing (PATH, HOME=/tmp, LANG, TERM), so no key is in any environ it can read, and in
  its PID namespace Kgent's process does not exist (`/proc/$PPID` is bubblewrap's init).
- `docker`: the official harness's image for the instance (`swebench/sweb.eval.x86_64.<id>:latest`, named by the
  instance file's `image` field or the installed `swebench` package), started once per instance with the
  workspace mounted at /testbed (and at its own path), every command `docker exec`'d into it (`bash -lc`, so the
  image's conda environment is active), the container removed at the end.

`confined_tools` wraps the file tools (read, write, edit, grep, find, ls) so that they refuse paths outside the
workspace even in full mode, and leaves out web_fetch unless the network is on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from kgent.core.errors import KgentError
from kgent.sandbox.bwrap import (  # what the project sandbox shows and hides of the host
    SYSTEM_DIRS,
    SYSTEM_SECRETS,
)
from kgent.swebench.instances import Instance
from kgent.tools.base import CallDescription, CommandResult, FileChangePreview, Tool, ToolContext, ToolOutput
from kgent.tools.truncate import DEFAULT_MAX_BYTES, truncate_tail

SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
KEEP_BYTES = 4 * DEFAULT_MAX_BYTES  # of a command's output, the newest bytes kept for the model
TESTBED = "/testbed"  # where the harness's images hold the repository (their environment is installed for it)
KILL_GRACE = 5.0


class EnvironmentFailed(KgentError):
    """An instance's environment could not be opened; the message says what to do."""

    code = "environment_failed"


class Environment(Protocol):
    """Where an instance's commands run. `open` yields the bash tool's runner for one instance."""

    @property
    def name(self) -> str: ...

    @property
    def network(self) -> bool: ...

    def open(self, instance: Instance, workspace: Path) -> contextlib.AbstractAsyncContextManager[Any]: ...


# Set for every command, as mini-swe-agent does: no pager waiting for a key, no progress bars filling the output,
# no bytecode files left in the workspace (they would become part of the patch where .gitignore does not hide them).
COMMAND_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "PIP_PROGRESS_BAR": "off",
    "TQDM_DISABLE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}


def _minimal_env() -> dict[str, str]:
    """A local command's whole environment: nothing inherited from Kgent's process."""
    return {
        "PATH": SAFE_PATH,
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        **COMMAND_ENV,
    }


class _Runner:
    """A CommandRunner for argv built per command: the command's own process group, merged output (the newest
    KEEP_BYTES), a time limit; on timeout or cancel the group is killed and `on_kill` runs (docker: inside)."""

    sandboxed = True

    def __init__(
        self,
        where: str,
        argv: Callable[[str, str], list[str]],
        env: dict[str, str],
        on_kill: Callable[[str], Any] | None = None,
    ) -> None:
        self.where = where
        self._argv = argv
        self._env = env
        self._on_kill = on_kill

    async def run(self, command: str, ctx: ToolContext, limit: float) -> CommandResult:
        call = uuid.uuid4().hex
        # Spawned under a shield: a cancel that lands mid-spawn inside asyncio can wait forever for the child's
        # exit (its transport's _wait); instead the spawn finishes, then the command is killed (as bash.py does).
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *self._argv(command, call),
                env=self._env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        )
        try:
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            try:
                started = await spawn
            except Exception:
                raise asyncio.CancelledError from None
            await self._kill(started, call)
            raise
        buf = bytearray()
        total = 0

        async def pump() -> None:
            nonlocal total
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(65536):
                total += len(chunk)
                buf.extend(chunk)
                if len(buf) > 2 * KEEP_BYTES:
                    del buf[: len(buf) - KEEP_BYTES]
                if ctx.on_update is not None:
                    with contextlib.suppress(Exception):
                        ctx.on_update(
                            truncate_tail(buf[-DEFAULT_MAX_BYTES:].decode("utf-8", "replace")).content
                        )

        reader = asyncio.create_task(pump())

        async def finished() -> None:  # its output closed and its process gone, both within the limit
            await reader
            await proc.wait()

        timed_out = False
        try:
            try:
                await asyncio.wait_for(finished(), limit)
            except TimeoutError:
                timed_out = True
                await self._kill(proc, call)
        except asyncio.CancelledError:
            await asyncio.shield(self._kill(proc, call))
            raise
        finally:
            if not reader.done():
                reader.cancel()
        text = bytes(buf[-KEEP_BYTES:]).decode("utf-8", "replace").removesuffix("\n")
        out = truncate_tail(text).content or "(no output)"
        if total > len(text.encode("utf-8", "replace")) + 1:
            out = f"[earlier output dropped: {total} bytes in all]\n{out}"
        code = None if timed_out else proc.returncode
        return CommandResult(
            output=out, exit_code=code, timed_out=timed_out, details={"environment": self.where}
        )

    async def _kill(self, proc: asyncio.subprocess.Process, call: str) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if self._on_kill is not None:
            with contextlib.suppress(Exception):
                await self._on_kill(call)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), KILL_GRACE)


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalEnvironment:
    """Commands on this machine inside bubblewrap, seeing the workspace and the system's programs only."""

    network: bool = False
    bwrap: str | None = None  # default: `bwrap` on PATH
    ro_binds: tuple[Path, ...] = ()  # more read-only directories (a toolchain outside /usr, /opt)
    name: str = "local"

    def command(self, workspace: Path, command: str) -> list[str]:
        """The argv that runs `command` in `workspace` confined (a pure function of its inputs)."""
        bwrap = self.bwrap or shutil.which("bwrap")
        if bwrap is None:
            raise EnvironmentFailed(
                "the local environment needs bubblewrap (apt-get install bubblewrap), or use --environment docker"
            )
        ws = os.path.realpath(workspace)
        args = [bwrap, "--die-with-parent", "--unshare-all", "--cap-drop", "ALL"]
        if self.network:
            args.append("--share-net")
        for d in SYSTEM_DIRS:
            if os.path.islink(d):
                args += ["--symlink", os.readlink(d), d]
            elif os.path.isdir(d):
                args += ["--ro-bind", d, d]
        for secret in SYSTEM_SECRETS:
            if os.path.isdir(secret) and not os.path.islink(secret):
                args += ["--tmpfs", secret, "--remount-ro", secret]
            elif os.path.lexists(secret) and not os.path.islink(secret):
                args += ["--ro-bind", "/dev/null", secret]
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
        for extra in self.ro_binds:  # after the tmpfs mounts, which would hide one under /tmp
            if extra.is_dir():
                args += ["--ro-bind", str(extra), str(extra)]
        args += ["--bind", ws, ws, "--chdir", ws, "--", "/bin/bash", "-c", command]
        return args

    @contextlib.asynccontextmanager
    async def open(self, instance: Instance, workspace: Path) -> AsyncIterator[_Runner]:
        # fail the instance now, not every command later, when bubblewrap is missing or cannot run here
        code, said = await _run_cli(self.command(workspace, "true"), env=_minimal_env())
        if code != 0:
            raise EnvironmentFailed(
                f"bubblewrap cannot confine commands here ({said or f'exit {code}'}): the local environment needs "
                "user namespaces (as root, or sysctl kernel.unprivileged_userns_clone=1), or use --environment docker"
            )
        yield _Runner(
            f"local (bwrap, network {'on' if self.network else 'off'})",
            lambda command, call: self.command(workspace, command),
            _minimal_env(),
        )


def harness_image(instance_id: str, namespace: str = "swebench") -> str:
    """The harness's name for an instance's prebuilt image on Docker Hub (x86_64), as swebench 5 derives it:
    `swebench/sweb.eval.x86_64.<id>:latest`, lower case, `__` written `_1776_` (Docker Hub forbids dunders)."""
    return f"{namespace}/sweb.eval.x86_64.{instance_id}:latest".lower().replace("__", "_1776_")


def image_for(instance: Instance, namespace: str = "swebench") -> str:
    """The image the harness evaluates the instance in: the instance's `image` field (swebench 5 schema), else
    the name the harness derives from its id."""
    image = instance.fields.get("image")
    if isinstance(image, str) and image:
        return image
    return harness_image(instance.instance_id, namespace)


@dataclass(frozen=True, slots=True, kw_only=True)
class DockerEnvironment:
    """Commands inside the harness's own image for the instance, as mini-swe-agent runs them."""

    network: bool = False
    docker: str = "docker"
    namespace: str = "swebench"  # Docker Hub namespace of the harness's prebuilt images
    platform: str | None = None  # e.g. linux/amd64 on an arm64 machine
    name: str = "docker"

    def run_command(self, instance: Instance, workspace: Path, container: str) -> list[str]:
        """`docker run`: the instance's container as the harness makes it (user root, idle on `tail -f
        /dev/null`), with the workspace mounted over /testbed (and at its own path, for the file tools' paths)."""
        ws = os.path.realpath(workspace)
        args = [self.docker, "run", "--detach", "--rm", "--name", container, "--user", "root"]
        args += ["--network", "bridge" if self.network else "none"]
        if self.platform:
            args += ["--platform", self.platform]
        args += ["--volume", f"{ws}:{TESTBED}", "--volume", f"{ws}:{ws}", "--workdir", TESTBED]
        args += [image_for(instance, self.namespace), "tail", "-f", "/dev/null"]
        return args

    def exec_command(self, container: str, command: str, call: str) -> list[str]:
        """`docker exec`: one command in the container, in /testbed, with the image's login shell (conda env)."""
        env = [a for k, v in COMMAND_ENV.items() for a in ("--env", f"{k}={v}")]
        return [self.docker, "exec", "--workdir", TESTBED, *env, "--env", f"KGENT_CALL={call}", container] + [
            "bash",
            "-lc",
            command,
        ]

    def kill_command(self, container: str, call: str) -> list[str]:
        """Kill every process of one call inside the container (`docker exec` does not when its client dies)."""
        script = (
            "for p in /proc/[0-9]*; do "
            f'grep -qz "^KGENT_CALL={call}$" "$p/environ" 2>/dev/null && kill -9 "${{p#/proc/}}"; '
            "done; true"
        )
        return [self.docker, "exec", container, "sh", "-c", script]

    def remove_command(self, container: str) -> list[str]:
        return [self.docker, "rm", "--force", container]

    @contextlib.asynccontextmanager
    async def open(self, instance: Instance, workspace: Path) -> AsyncIterator[_Runner]:
        container = f"kgent-{instance.instance_id.lower()}-{uuid.uuid4().hex[:8]}".replace("__", "-")
        argv = self.run_command(instance, workspace, container)
        code, out = await _run_cli(argv)
        image = image_for(instance, self.namespace)
        if code != 0:
            raise EnvironmentFailed(f"docker could not start {image} for {instance.instance_id}: {out}")
        env = {k: v for k, v in os.environ.items() if k.startswith("DOCKER_")} | _minimal_env()  # the CLI's

        async def kill(call: str) -> None:
            await _run_cli(self.kill_command(container, call))

        try:
            yield _Runner(
                f"docker ({image})",
                lambda command, call: self.exec_command(container, command, call),
                env,
                kill,
            )
        finally:
            await asyncio.shield(_run_cli(self.remove_command(container)))


async def _run_cli(argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run a docker (or bwrap) command: (exit code, what it said, at most its last 600 characters)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
    except OSError as exc:
        return 127, f"{argv[0]}: {exc.strerror}"
    out, _ = await proc.communicate()
    lines = [
        line.strip()
        for line in out.decode("utf-8", "replace").splitlines()
        if line.strip() and not line.startswith("Run '")  # docker's "Run 'docker run --help' …" hint
    ]
    return proc.returncode or 0, " ".join(lines)[-600:]


def make_environment(name: str, *, network: bool = False, ro_binds: Sequence[Path] = ()) -> Environment:
    """The environment the command line names (`ro_binds`: more read-only directories for `local`)."""
    if name == "local":
        for d in ro_binds:
            if not d.is_absolute() or not d.is_dir():
                raise EnvironmentFailed(f"--ro-bind {d}: not an absolute path of a directory")
        return LocalEnvironment(network=network, ro_binds=tuple(ro_binds))
    if ro_binds:
        raise EnvironmentFailed("--ro-bind is for the local environment (docker sees the image)")
    if name == "docker":
        return DockerEnvironment(network=network)
    raise EnvironmentFailed(f"unknown environment {name!r}: local or docker")


# The tools whose paths must stay in the workspace; web_fetch needs the network.
PATH_TOOLS = ("read", "write", "edit", "grep", "find", "ls")


class WorkspaceTool:
    """A tool whose calls never leave the workspace: its context says outside paths are not allowed, whatever the
    mode approved (full mode approves them)."""

    def __init__(self, tool: Tool) -> None:
        self.tool = tool
        self.name = tool.name
        self.description = tool.description
        self.parameters = tool.parameters
        self.kind = tool.kind
        self.read_only = tool.read_only
        self.intent = tool.intent

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        return self.tool.describe(args, replace(ctx, allow_outside=False))

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        return await self.tool.preview(args, replace(ctx, allow_outside=False))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await self.tool.run(args, replace(ctx, allow_outside=False))


def confined_tools(tools: Sequence[Tool], *, network: bool) -> tuple[Tool, ...]:
    """The tools of an instance's run: path tools kept in the workspace; web_fetch only with the network."""
    out: list[Tool] = []
    for tool in tools:
        if tool.name == "web_fetch" and not network:
            continue
        out.append(WorkspaceTool(tool) if tool.name in PATH_TOOLS else tool)
    return tuple(out)
