"""`kgent desktop` under Xvfb: the real command in a real Qt WebEngine window (pywebview), driven over the web view's
own DevTools port (QTWEBENGINE_REMOTE_DEBUGGING; playwright cannot attach to Qt WebEngine, tests/http/cdp.py can): it shows the client signed in, runs a scripted task
with an approval, and exits cleanly when the window is closed from the page. KGENT_HTTP_SCREENSHOTS=DIR saves
desktop.png there."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from cdp import Cdp

from chromium import SHOTS, TIMEOUT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# The page's background as a relative luminance (0 black … 1 white), evaluated in the window.
BACKGROUND = (
    "(() => { const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/[0-9.]+/g).map(Number);"
    " return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255; })()"
)


def test_kgent_desktop_runs_a_task_with_an_approval_and_closes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    devtools = free_port()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "DISPLAY"}
    env.update(
        KGENT_PROVIDER="scripted",
        KGENT_STATE_DIR=str(tmp_path / "state"),
        KGENT_HTTP_TOKEN="must-not-be-used",
        QTWEBENGINE_REMOTE_DEBUGGING=str(devtools),
        PYTHONUNBUFFERED="1",
    )
    command = [sys.executable, "-m", "kgent", "desktop", "--workspace-root", str(ws)]
    proc = subprocess.Popen(
        ["xvfb-run", "-a", "-s", "-screen 0 1280x860x24", *command],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert proc.stdout is not None
    output: list[str] = []
    started = threading.Event()

    def drain() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            output.append(raw.decode(errors="replace"))
            if "desktop window on" in output[-1]:
                started.set()

    threading.Thread(target=drain, daemon=True).start()
    try:
        assert started.wait(TIMEOUT / 1000), "".join(output)
        base = re.search(r"desktop window on (\S+)", "".join(output))
        assert base is not None
        server = base.group(1).rstrip("/")
        deadline = time.monotonic() + TIMEOUT / 1000
        while True:  # the web view opens its DevTools port once its window is up
            try:
                httpx.get(f"http://127.0.0.1:{devtools}/json/version", timeout=5).raise_for_status()
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and proc.poll() is None, "".join(output)
                time.sleep(0.1)
        page = Cdp.page(devtools, TIMEOUT / 1000)
        wait = TIMEOUT / 1000
        try:
            # signed in, and asked which project: the root itself, chosen with "Use this directory"
            page.wait_for("document.getElementById('project-dialog').open", wait)
            page.wait_for("!document.getElementById('project-use').disabled", wait)
            page.evaluate("document.getElementById('project-use').click()")
            page.wait_for("document.getElementById('project').textContent === 'Project: ws'", wait)
            assert page.evaluate("location.href") == f"{server}/"  # the token left the address bar
            with httpx.Client() as c:  # the shared KGENT_HTTP_TOKEN was not used: the token is fresh
                res = c.get(f"{server}/api/info", headers={"Authorization": "Bearer must-not-be-used"})
                assert res.status_code == 401
            page.evaluate(
                """(() => { const set = (id, v) => { const e = document.getElementById(id); e.value = v;
                     e.dispatchEvent(new Event('change')); };
                   set('mode', 'ask'); set('provider', 'scripted'); set('model', 'read-then-write');
                   document.getElementById('prompt').value = 'rewrite notes.txt';
                   document.getElementById('send').click(); })()"""
            )
            page.wait_for(
                "document.querySelector('.approval button[data-option-id=allow_once]') !== null", wait
            )
            assert page.evaluate("document.title") == "(1) waiting for you · Kgent"
            page.evaluate("document.querySelector('.approval button[data-option-id=allow_once]').click()")
            page.wait_for("document.querySelector('.run-end')?.textContent.includes('Run settled')", wait)
            assert (ws / "notes.txt").read_text() == "rewritten\n"
            # dark mode in the window: the system's preference followed, and the toggle's light kept over it
            page.call(
                "Emulation.setEmulatedMedia",
                {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
            )
            assert page.wait_for(f"{BACKGROUND} < 0.1", wait)
            page.evaluate(
                "document.getElementById('theme').click(); document.getElementById('theme').click()"
            )
            assert page.evaluate("document.getElementById('theme').textContent") == "Theme: light"
            assert page.wait_for(f"{BACKGROUND} > 0.8", wait)
            page.evaluate("document.getElementById('theme').click()")  # back to following the system: dark
            assert page.wait_for(f"{BACKGROUND} < 0.1", wait)
            if SHOTS:
                page.screenshot(Path(SHOTS) / "desktop.png")
            assert page.wait_for("!document.getElementById('close-window').hidden", wait)
            page.evaluate("document.getElementById('close-window').click()")
        finally:
            page.close()
        assert proc.wait(TIMEOUT / 1000) == 0, "".join(output)
        log = "".join(output)
        assert "server stopped" in log
        assert "Traceback" not in log, log
        # the page keeps its own Content-Security-Policy: the web view logs no violation of it (an inline style)
        assert "Content Security Policy" not in log, log
        try:
            httpx.get(f"{server}/health", timeout=5)
            raise AssertionError("the server still answers after the window closed")
        except httpx.TransportError:
            pass
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
