"""A third-party package, installed into a fresh venv (this one's packages beneath it), registers a tool, a provider
and a hook through its entry point; `kgent extensions` lists them, and `kgent run`, the stdio daemon and `kgent acp`
(each a subprocess of that venv) use all three."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp import schema as S

from kgent.testing.daemon_client import DaemonClient

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


DENIED = "permission_denied: extension 'third' denied this call: third says no"


@pytest.fixture(scope="module")
def third(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The venv with the package installed, the environment to run it in and a workspace."""
    tmp = tmp_path_factory.mktemp("third")
    script = tmp / "calc.json"
    turns = [
        [{"tool": "third_calc", "args": {"expression": "1+2"}}],
        [{"tool": "third_calc", "args": {"expression": "6*7"}}],
        [{"text": "done"}],
    ]
    script.write_text(json.dumps({"turns": turns}))
    src = tmp / "pkg"
    (src / "kgent_third").mkdir(parents=True)
    (src / "kgent_third" / "__init__.py").write_text(PACKAGE.replace("{script}", str(script)))
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "kgent-third"\nversion = "0.3.0"\n'
        '[project.entry-points."kgent.extensions"]\nthird = "kgent_third:register"\n'
    )
    venv = tmp / "venv"
    # uv (a dev dependency, beside this interpreter): a venv and a package's build in well under a second, where
    # `python -m venv` and pip's isolated build took ~15 s of the suite; the entry points it writes are the same.
    uv = str(Path(sys.executable).parent / "uv")
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    # this venv's packages (kgent, editable, among them) under the new one's, as --system-site-packages would
    [site] = [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)]
    [new_site] = venv.glob("lib/python*/site-packages")
    (new_site / "_kgent_parent.pth").write_text(f"import site; site.addsitedir({site!r})\n")
    py = venv / "bin" / "python"
    subprocess.run([uv, "pip", "install", "-q", "--python", str(py), "--no-deps", str(src)], check=True)
    env = {**os.environ, "KGENT_CONFIG_DIR": str(tmp / "cfg"), "KGENT_STATE_DIR": str(tmp / "state")}
    env = {k: v for k, v in env.items() if not k.startswith("KGENT_PROVIDER")}
    ws = tmp / "ws"
    ws.mkdir()
    return {"py": str(py), "env": env, "ws": ws.resolve()}


def test_kgent_extensions_lists_it_and_kgent_run_uses_it(third: dict[str, Any]) -> None:
    py, env, ws = third["py"], third["env"], third["ws"]
    listed = subprocess.run(
        [py, "-m", "kgent", "extensions", "--json", "--workspace", str(ws)],
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
            py,
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
    events = [json.loads(line) for line in ran.stdout.splitlines()]
    updates = [e for e in events if e.get("type") == "tool_update" and e["status"] != "in_progress"]
    assert [u["output"] for u in updates] == ["3", DENIED]


async def test_the_stdio_daemon_uses_it(third: dict[str, Any]) -> None:
    client = await DaemonClient.spawn([third["py"], "-m", "kgent", "serve", "--stdio"], env=third["env"])
    events: list[dict[str, Any]] = []
    ended = asyncio.Event()

    def on_event(method: str, params: Any) -> None:
        if method == "agent/event":
            events.append(params["event"])
            if params["event"]["type"] == "run_end":
                ended.set()

    client.on_notification = on_event
    try:
        init = await client.request("initialize", {"protocolVersion": 1, "settings": {"provider": "third"}})
        caps = init["capabilities"]
        assert (
            "third" in caps["providers"]
            and {"name": "third_calc", "kind": "think", "readOnly": True} in caps["tools"]
        )
        assert [e["name"] for e in caps["extensions"]["extensions"]] == ["third"]
        await client.request("agent/run", {"prompt": "go", "workspace": str(third["ws"]), "mode": "full"})
        await asyncio.wait_for(ended.wait(), 120)
    finally:
        assert await client.close(within=30) == 0
    outputs = [e["output"] for e in events if e["type"] == "tool_update" and e["status"] != "in_progress"]
    assert outputs == ["3", DENIED]
    assert events[-1]["status"] == "settled"


class _AcpClient:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def request_permission(self, **kwargs: Any) -> S.RequestPermissionResponse:
        raise AssertionError("full mode asks nothing")

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


async def test_kgent_acp_uses_it(third: dict[str, Any]) -> None:
    client = _AcpClient()
    env = {**third["env"], "KGENT_PROVIDER": "third", "KGENT_PERMISSION_MODE": "full"}
    async with spawn_agent_process(client, third["py"], "-m", "kgent", "acp", env=env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(third["ws"]), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
    assert done.stop_reason == "end_turn"
    ends = [
        u
        for u in client.updates
        if u.session_update == "tool_call_update" and u.status in ("completed", "failed")
    ]
    assert [u.status for u in ends] == ["completed", "failed"]
    assert DENIED in json.dumps([u.model_dump(mode="json") for u in ends])
