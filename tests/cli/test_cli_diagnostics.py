"""`kgent run` headless with a configured language server (`ruff server`, installed by make): the scripted model's
edit that introduces an undefined name reads the diagnostic in its tool result; the fixing edit reads none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

RUFF = str(Path(sys.executable).with_name("ruff"))


def test_kgent_run_reports_the_new_diagnostic_of_an_edit(tmp_path: Path) -> None:
    ws, config = tmp_path / "ws", tmp_path / "config"
    ws.mkdir()
    config.mkdir()
    (ws / "app.py").write_text("value = 1\nprint(value)\n")
    (config / "config.toml").write_text(
        f'[language_servers.ruff]\ncommand = ["{RUFF}", "server"]\nfiles = ["*.py"]\ntimeout = 20\n'
    )
    script = tmp_path / "script.json"
    edit = {"tool": "edit", "args": {"path": "app.py", "oldText": "print(value)", "newText": "print(valu)"}}
    fix = {"tool": "edit", "args": {"path": "app.py", "oldText": "print(valu)", "newText": "print(value)"}}
    script.write_text(json.dumps([[edit], [fix], [{"text": "done"}]]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and "API_KEY" not in k}
    env.update(KGENT_STATE_DIR=str(tmp_path / "state"), KGENT_CONFIG_DIR=str(config))
    out = subprocess.run(
        [sys.executable, "-m", "kgent", "run", "--provider", "scripted", "--script", str(script)]
        + ["--mode", "auto", "--json", "--workspace", str(ws), "break it, then fix it"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    done = [e for e in events if e.get("type") == "tool_update" and e.get("status") == "completed"]
    broken, fixed = done
    assert "app.py:2:7: error F821 Undefined name `valu` (Ruff)" in broken["output"]
    assert [d["code"] for d in broken["diagnostics"]] == ["F821"]
    assert fixed["diagnostics"] == [] and "Undefined name" not in fixed["output"]
