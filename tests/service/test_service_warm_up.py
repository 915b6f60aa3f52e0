"""Warm while the person types (issue 37): after Service.warm_up, which every front runs once its handshake is
answered, the first run — a read, an edit, a shell command and an answer over real HTTP — imports no module; and
jsonschema is loaded by neither (the calls fit their schemas).

A real process, so the modules the test runner already holds cannot hide one: the run's imports are the set
difference of sys.modules before and after it, written out as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kgent.testing import ModelServer

SCRIPT = [
    [{"tool": "read", "args": {"path": "sample.py"}}],
    [{"tool": "edit", "args": {"path": "sample.py", "oldText": "value = 1", "newText": "value = 2"}}],
    [{"tool": "bash", "args": {"command": "grep -c 'value = 2' sample.py"}}],
    [{"text": "done", "chunks": 2}],
]

# argv: WORKSPACE OUT: warm a service up, run the task once, write {"status", "imported"} to OUT.
WARM_THEN_RUN = """import asyncio, json, sys
from kgent.service import wire as W
from kgent.service.handshake import Settings
from kgent.service.service import Service
from kgent.testing.ports import MemoryPort
workspace, out = sys.argv[1], sys.argv[2]

async def main():
    port = MemoryPort()
    svc = Service(dict(__import__("os").environ), Settings(), port)
    await asyncio.get_running_loop().run_in_executor(None, svc.warm_up)
    before = set(sys.modules)
    handle = await svc.start_run(W.RunParams.parse({"prompt": "go", "workspace": workspace, "mode": "full"}))
    handle.start()
    await port.until(lambda: port.ended(handle.run_id))
    imported = sorted(set(sys.modules) - before)
    status = port.events[handle.run_id][-1][1].result.status
    await svc.close()
    open(out, "w").write(json.dumps({"status": status, "imported": imported, "all": sorted(sys.modules)}))

asyncio.run(main())
"""


def test_the_first_run_after_the_warm_up_imports_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sample.py").write_text("value = 1\n")
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    out = tmp_path / "out.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and "API_KEY" not in k}
    with ModelServer(SCRIPT) as server:
        env.update(
            KGENT_STATE_DIR=str(tmp_path / "state"),
            KGENT_CONFIG_DIR=os.environ["KGENT_CONFIG_DIR"],
            KGENT_PROVIDER="openai",
            KGENT_BASE_URL=server.base_url("openai"),
            KGENT_MODEL="test",
            KGENT_API_KEY="sk-test",
        )
        done = subprocess.run(
            [sys.executable, "-c", WARM_THEN_RUN, str(ws), str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["status"] == "settled"
    assert (ws / "sample.py").read_text() == "value = 2\n"
    assert result["imported"] == []
    # valid calls are checked without jsonschema, so neither the warm-up nor the run loads it (kgent.kernel.arguments)
    assert not any(m == "jsonschema" or m.startswith("jsonschema.") for m in result["all"])
