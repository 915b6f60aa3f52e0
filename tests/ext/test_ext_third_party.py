"""A third-party package, pip-installed into a fresh venv (this one's packages beneath it), registers a tool, a provider
and a hook through its entry point; `kgent extensions` lists them and `kgent run` uses all three."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PACKAGE = """
from kgent.providers.scripted import ScriptedProvider
from kgent.tools import CalculatorTool

__version__ = "0.3.0"

def register(api):
    tool = CalculatorTool()
    tool.name = "third_calc"
    api.tool(tool)
    api.provider("third", lambda config: ScriptedProvider(config.model or "{script}"), default_model="{script}")
    api.hook("before_tool_call", lambda ctx, call: "third says no" if call.arguments.get("expression") == "6*7" else None)
"""


def test_an_installed_package_registers_a_tool_a_provider_and_a_hook(tmp_path: Path) -> None:
    script = tmp_path / "calc.json"
    turns = [
        [{"tool": "third_calc", "args": {"expression": "1+2"}}],
        [{"tool": "third_calc", "args": {"expression": "6*7"}}],
        [{"text": "done"}],
    ]
    script.write_text(json.dumps({"turns": turns}))
    src = tmp_path / "pkg"
    (src / "kgent_third").mkdir(parents=True)
    (src / "kgent_third" / "__init__.py").write_text(PACKAGE.replace("{script}", str(script)))
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "kgent-third"\nversion = "0.3.0"\n'
        '[project.entry-points."kgent.extensions"]\nthird = "kgent_third:register"\n'
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    # this venv's packages (kgent, editable, among them) under the new one's, as --system-site-packages would
    [site] = [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)]
    [new_site] = venv.glob("lib/python*/site-packages")
    (new_site / "_kgent_parent.pth").write_text(f"import site; site.addsitedir({site!r})\n")
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", str(src)],
        check=True,
    )
    env = {
        **os.environ,
        "KGENT_CONFIG_DIR": str(tmp_path / "cfg"),
        "KGENT_STATE_DIR": str(tmp_path / "state"),
    }
    ws = tmp_path / "ws"
    ws.mkdir()
    listed = subprocess.run(
        [str(py), "-m", "kgent", "extensions", "--json", "--workspace", str(ws)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 0, listed.stderr
    [record] = json.loads(listed.stdout)["extensions"]
    assert record["name"] == "third" and record["source"] == "entry point" and record["version"] == "0.3.0"
    assert record["registered"] == ["hook:before_tool_call", "provider:third", "tool:third_calc"]
    ran = subprocess.run(
        [
            str(py),
            "-m",
            "kgent",
            "run",
            "--json",
            "--provider",
            "third",
            "--mode",
            "full",
            "--workspace",
            str(ws),
            "go",
        ],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    updates = [
        e
        for e in map(json.loads, ran.stdout.splitlines())
        if e.get("type") == "tool_update" and e["status"] != "in_progress"
    ]
    assert [u["output"] for u in updates] == [
        "3",
        "permission_denied: extension 'third' denied this call: third says no",
    ]
