"""What `kgent serve --http` prints when it starts: with KGENT_HTTP_TOKEN, a URL that signs the browser in with the
real token on the terminal of the person who started it (as Jupyter does), and only a placeholder where the output is
kept — a pipe or a file (a service's log, a test's capture)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

from kgent.http.guard import HttpConfig
from kgent.http.serve import banner
from kgent.testing.http_server import TOKEN, HttpServer

BASE = "http://127.0.0.1:8787/"


def test_the_banner_prints_the_environments_token_only_to_a_terminal() -> None:
    config = HttpConfig(token="s3cret-from-env", token_from_env=True, workspace_roots=("/home/me/p",))
    shown = banner(config, BASE, terminal=True)
    assert f"open {BASE}?token=s3cret-from-env\n" in shown
    kept = banner(config, BASE, terminal=False)
    assert "s3cret-from-env" not in kept
    assert f"open {BASE}?token=<KGENT_HTTP_TOKEN>\n" in kept
    made = HttpConfig(
        token="made-here", workspace_roots=("/home/me/p",)
    )  # a token the server made: always shown
    assert f"open {BASE}?token=made-here\n" in banner(made, BASE, terminal=False)


def test_a_pipe_never_gets_the_token(server: HttpServer) -> None:
    assert TOKEN not in "".join(server.output)
    assert "?token=<KGENT_HTTP_TOKEN>" in "".join(server.output)


def test_a_terminal_gets_a_url_that_signs_in(tmp_path: Path) -> None:
    """The real command on a pseudo-terminal prints the URL with the token, and that URL signs a browser in."""
    token = "terminal-token-0123456789"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(KGENT_STATE_DIR=str(tmp_path / "state"), KGENT_HTTP_TOKEN=token, KGENT_PROVIDER="scripted")
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgent", "serve", "--http", "--port", "0", "--workspace-root", str(tmp_path)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
    )
    os.close(child)
    try:
        out = b""
        deadline = time.monotonic() + 60
        while b"?token=" not in out:
            assert time.monotonic() < deadline and proc.poll() is None, out
            out += os.read(main, 4096)
        while not out.endswith(b"\n"):
            out += os.read(main, 4096)
        found = re.search(rb"open (\S+)\?token=(\S+)", out)
        assert found is not None, out
        assert found.group(2).decode() == token
        with httpx.Client(base_url=found.group(1).decode()) as c:
            assert c.post("/api/login", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    finally:
        proc.terminate()
        proc.wait(30)
        os.close(main)
