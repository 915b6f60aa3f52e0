"""The shell sandbox: what a command can see, write and reach under each Grant, with bubblewrap — and that without
it (`KGENT_SANDBOX=none`, or bwrap missing) commands run as they are and the kernel knows it has no walls.

Every test runs against each sandbox this machine has: bubblewrap (when installed and able to create namespaces;
`make test` installs it on Debian as root) and NoSandbox, so the suite means something on either."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from pathlib import Path

import pytest

from helpers import processes_with
from kgent.files.ops import LocalFileOps
from kgent.files.protected import ProtectedFiles
from kgent.sandbox.bwrap import Bubblewrap, Grant, NoSandbox, Sandbox, detect
from kgent.tools.base import ToolContext
from kgent.tools.bash import BashTool

bash = BashTool()
SANDBOXES = [detect(), NoSandbox("forced off for the test")]
IDS = [f"{s.name}-{i}" for i, s in enumerate(SANDBOXES)]


@pytest.fixture(params=SANDBOXES, ids=IDS)
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "deep").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('app')\n")
    (ws / ".env").write_text("ENV_MARKER\n")
    (ws / "src" / "deep" / ".env.local").write_text("DEEP_MARKER\n")
    (ws / "src" / "server.key").write_text("KEY_MARKER\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE_MARKER\n")
    os.link(outside / "secret.txt", ws / "notes.txt")  # a hard link into the workspace
    (ws / "linkdir").symlink_to(outside, target_is_directory=True)
    return ws


async def _run(sandbox: Sandbox, ws: Path, command: str, grant: Grant) -> str:
    ctx = ToolContext(workspace=ws, fs=LocalFileOps(), sandbox=sandbox, grant=grant)
    out = await bash.run({"command": command}, ctx)
    return out.content


def test_detect_honours_the_switch_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    off = detect({"KGENT_SANDBOX": "none"})
    assert isinstance(off, NoSandbox) and not off.contains and "KGENT_SANDBOX=none" in off.reason
    assert detect({"KGENT_SANDBOX": "auto"}) is detect({})  # probed once per process
    monkeypatch.setenv("PATH", "/nonexistent")
    from kgent.sandbox import bwrap as module

    module._detect.cache_clear()
    try:
        missing = detect({})
        assert isinstance(missing, NoSandbox) and "not installed" in missing.reason
    finally:
        module._detect.cache_clear()


async def test_secrets_and_outside_files_are_hidden_from_a_read(sandbox: Sandbox, tree: Path) -> None:
    out = await _run(
        sandbox,
        tree,
        "cat .env src/deep/.env.local src/server.key notes.txt; grep -r MARKER .; cat linkdir/secret.txt",
        Grant(),
    )
    if sandbox.contains:
        assert "MARKER" not in out.replace("grep -r MARKER", "")
        assert "Permission denied" in out
        assert "app" not in out  # grep found no marker in app.py either
    else:
        assert "ENV_MARKER" in out and "OUTSIDE_MARKER" in out  # unconfined: hence every command is asked


async def test_an_approved_call_sees_what_it_was_approved_for(sandbox: Sandbox, tree: Path) -> None:
    grant = Grant(write=True, secrets=True, approved=True)
    out = await _run(sandbox, tree, "cat .env notes.txt", grant)
    assert "ENV_MARKER" in out and "OUTSIDE_MARKER" in out
    hidden = await _run(sandbox, tree, "cat .env notes.txt", Grant(write=True, approved=True))
    if sandbox.contains:
        assert (
            "ENV_MARKER" not in hidden and "OUTSIDE_MARKER" in hidden
        )  # hard links count only for unasked reads


async def test_the_workspace_is_read_only_unless_writing_is_allowed(sandbox: Sandbox, tree: Path) -> None:
    await _run(sandbox, tree, "echo x > made.txt", Grant())
    assert (tree / "made.txt").exists() != sandbox.contains
    await _run(sandbox, tree, "echo y > written.txt", Grant(write=True, approved=True))
    assert (tree / "written.txt").read_text() == "y\n"


async def test_tmp_and_home_are_private(sandbox: Sandbox, tree: Path, tmp_path: Path) -> None:
    marker = Path("/tmp") / f"kgent-sandbox-probe-{os.getpid()}"
    marker.write_text("HOST_TMP\n")
    try:
        out = await _run(
            sandbox,
            tree,
            f"cat {marker}; ls -a ~ | wc -l; echo tmp > /tmp/x; cat /tmp/x",
            Grant(write=True, approved=True),
        )
    finally:
        marker.unlink()
    if sandbox.contains:
        assert "HOST_TMP" not in out and "No such file" in out
        assert "tmp" in out


async def test_outside_paths_are_bound_only_when_approved(
    sandbox: Sandbox, tree: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    plain = await _run(sandbox, tree, f"cat {secret}", Grant(approved=True))
    granted = await _run(sandbox, tree, f"cat {secret}", Grant(outside=(str(secret),), approved=True))
    assert "OUTSIDE_MARKER" in granted
    assert ("OUTSIDE_MARKER" in plain) != sandbox.contains


def _server() -> tuple[socket.socket, int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def serve() -> None:
        try:
            conn, _ = srv.accept()
            conn.sendall(b"HELLO\n")
            conn.close()
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()
    return srv, srv.getsockname()[1]


async def test_no_network_unless_the_call_was_approved_for_it(sandbox: Sandbox, tree: Path) -> None:
    probe = "exec 3<>/dev/tcp/127.0.0.1/{port} && cat <&3"
    srv, port = _server()
    try:
        closed = await _run(sandbox, tree, probe.format(port=port), Grant(approved=True, write=True))
        assert ("HELLO" in closed) != sandbox.contains
        if sandbox.contains:
            srv2, port2 = _server()
            try:
                opened = await _run(
                    sandbox, tree, probe.format(port=port2), Grant(approved=True, network=True)
                )
                assert "HELLO" in opened
            finally:
                srv2.close()
    finally:
        srv.close()


async def test_git_sees_its_repository_but_not_its_config(sandbox: Sandbox, tree: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    proc = await asyncio.create_subprocess_shell(
        "git init -q . && git add src/app.py && git commit -qm first && "
        "git config remote.origin.url https://user:CONFIG_MARKER@example.com/x",
        cwd=tree,
        env=env,
    )
    assert await proc.wait() == 0
    out = await _run(
        sandbox,
        tree,
        "git log --oneline; git status --short src; grep -r CONFIG_MARKER .; echo done",
        Grant(git=True),
    )
    assert "first" in out and "done" in out
    assert ("CONFIG_MARKER" in out) != sandbox.contains
    hidden = await _run(sandbox, tree, "ls .git", Grant())
    if sandbox.contains:
        assert "HEAD" not in hidden  # a command that runs no git does not see .git at all


async def test_cancel_kills_the_sandboxed_command(sandbox: Sandbox, tree: Path, tmp_path: Path) -> None:
    """Once the cancelled call has returned, no process of the command is left: the shell running the loop carries a
    marker on its command line, and /proc has no process with it (so nothing is still writing)."""
    flag = tree / "alive.txt"
    marker = f"kgent-cancel-probe-{os.getpid()}-{id(flag)}"
    ctx = ToolContext(
        workspace=tree, fs=LocalFileOps(), sandbox=sandbox, grant=Grant(write=True, approved=True)
    )
    task = asyncio.ensure_future(
        bash.run({"command": f"while true; do date > alive.txt; sleep 0.05; done # {marker}"}, ctx)
    )
    for _ in range(500):
        if flag.exists() and processes_with(marker):
            break
        await asyncio.sleep(0.02)
    assert flag.exists() and processes_with(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert processes_with(marker) == []


def test_the_protected_scan_sees_new_files_and_hard_links(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "a" / "b").mkdir(parents=True)
    scan = ProtectedFiles(str(ws))
    assert scan.refresh().protected == ()
    (ws / "a" / "b" / ".env.prod").write_text("x")
    (ws / "other.txt").write_text("x")
    os.link(ws / "other.txt", ws / "a" / "twin.txt")
    found = scan.refresh()
    assert found.protected == ("a/b/.env.prod",)
    assert found.hardlinked == {".": ("other.txt",), "a": ("twin.txt",)}
    (ws / "a" / "b" / ".env.prod").unlink()
    assert scan.refresh().protected == ()


def test_many_hard_links_in_one_directory_mask_the_directory(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "venv").mkdir(parents=True)
    store = tmp_path / "store"
    store.mkdir()
    for i in range(40):
        (store / f"f{i}").write_text("x")
        os.link(store / f"f{i}", ws / "venv" / f"f{i}")
    sandbox = detect()
    if isinstance(sandbox, Bubblewrap):
        argv, _ = sandbox.wrap(["true"], workspace=ws, grant=Grant(), env=dict(os.environ))
        assert argv.count("/dev/null") < 10 and str(ws / "venv") in argv


async def test_an_unasked_read_runs_no_startup_file_or_exported_function(
    sandbox: Sandbox, tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    startup = tree / "startup.sh"  # in the workspace, so the sandbox could read it
    startup.write_text("echo STARTUP_RAN\n")
    monkeypatch.setenv("BASH_ENV", str(startup))
    monkeypatch.setenv("BASH_FUNC_cat%%", "() { echo FUNCTION_RAN; }")
    out = await _run(sandbox, tree, "cat src/app.py", Grant())
    assert ("app" in out) == sandbox.contains
    assert ("STARTUP_RAN" in out and "FUNCTION_RAN" in out) != sandbox.contains


async def test_the_result_says_which_walls_the_command_ran_in(sandbox: Sandbox, tree: Path) -> None:
    ctx = ToolContext(
        workspace=tree, fs=LocalFileOps(), sandbox=sandbox, grant=Grant(write=True, approved=True)
    )
    out = await bash.run({"command": "true"}, ctx)
    if sandbox.contains:
        assert out.details["sandbox"] == "bwrap: workspace writable, no network, protected files hidden"
    else:
        assert "sandbox" not in out.details
