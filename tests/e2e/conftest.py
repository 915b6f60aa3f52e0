"""E2e fixtures: the daemon as a subprocess over real pipes, driven by the scriptable KgentHost."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import pytest_lsp
from kgent_host import DAEMON, STATE_DIR, KgentHost, check_stream, daemon_env
from pytest_lsp import ClientServerConfig

SAMPLE = "value = 1\nprint(value)\n"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(STATE_DIR, ignore_errors=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sample.py").write_text(SAMPLE)
    return ws.resolve()  # as the daemon reports it


async def finish(host: KgentHost) -> None:
    """Teardown: `exit`, the process is gone promptly with status 0, every stream kept its guarantees, and the
    daemon logged no traceback."""
    code = await host.exit()
    assert code == 0
    for run_id in host.events:
        check_stream(host, run_id, ended=False)
    assert b"Traceback" not in host.stderr, host.stderr.decode(errors="replace")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=DAEMON, client_factory=KgentHost, server_env=daemon_env(STATE_DIR)))
async def host(client: KgentHost) -> AsyncIterator[None]:
    client.start_drain()
    await client.initialize()
    yield
    await finish(client)


Spawn = Callable[..., Awaitable[KgentHost]]


@pytest.fixture
async def spawn(tmp_path: Path) -> AsyncIterator[Spawn]:
    """Start extra daemons with their own environment: `await spawn(KGENT_X=...)` (initialized unless told not)."""
    hosts: list[KgentHost] = []

    async def start(*, initialize: bool = True, command: list[str] | None = None, **env: str) -> KgentHost:
        h = KgentHost()
        await h.launch(daemon_env(env.pop("state_dir", STATE_DIR), **env), command)
        hosts.append(h)
        if initialize:
            await h.initialize()
        return h

    yield start
    for h in hosts:
        if h._server is not None and h._server.returncode is None:
            await finish(h)
        await h.stop()
