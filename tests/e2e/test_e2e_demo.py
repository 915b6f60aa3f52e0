"""`make demo` drives the daemon like an editor and exits 0 with the patch on screen."""

from __future__ import annotations

import subprocess
import sys

from kgent_host import daemon_env


def test_demo(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = daemon_env(str(tmp_path))
    env["COLUMNS"] = "120"
    done = subprocess.run([sys.executable, "-m", "kgent.testing.daemon_demo"], capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "agent/permission" in out and "the demo answers: allow_once" in out
    assert "run_end" in out and "settled" in out
    assert "+value = 2" in out and "status 0" in out
