"""What `kgent run` and the daemon load: never the parts a run without them does not use (issue 19's start-up).

Each check is a real process: `kgent run` against the local model server, the modules it had loaded written out at
exit; the daemon's server module imported on its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgent.testing import ModelServer

# Loaded only by what needs them: MCP servers (the SDK, its starlette/uvicorn), extension schemas (jsonschema),
# `kgent serve --http` (fastapi), the human renderer (rich: not with --json), the daemon (pydantic), an LSP server's
# diagnostics (lsprotocol); httpx's command line client (click, pygments) never.
NOT_FOR_RUN = (
    "mcp",
    "mcp_types",
    "jsonschema",
    "anyio.from_thread",
    "starlette",
    "uvicorn",
    "fastapi",
    "sse_starlette",
    "rich",
    "click",
    "pygments",
    "pygls",
    "lsprotocol",
    "pydantic",
)
NOT_FOR_DAEMON = (
    "mcp",
    "mcp_types",
    "jsonschema",
    "starlette",
    "uvicorn",
    "fastapi",
    "rich",
    "click",
    "pygments",
    # the daemon's JSON-RPC is its own (docs/adr/0006): pygls' would load lsprotocol's ~550 classes (and attrs, cattrs)
    "pygls",
    "lsprotocol",
    "attr",
    "attrs",
    "cattrs",
)

# argv: OUT ARGS...: run `kgent ARGS...` in this process, then write the names of the loaded modules to OUT.
RUN_AND_LIST = """import atexit, json, runpy, sys
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["kgent", *sys.argv[2:]]
runpy.run_module("kgent", run_name="__main__")
"""


def loaded(names: list[str], unwanted: tuple[str, ...]) -> list[str]:
    return sorted({u for u in unwanted for n in names if n == u or n.startswith(u + ".")})


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
@pytest.mark.parametrize("json_flag", [True, False])
def test_kgent_run_loads_no_mcp_schema_or_server_libraries(
    tmp_path: Path, wire: str, json_flag: bool
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sample.py").write_text("value = 1\n")
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and "API_KEY" not in k}
    env.update(KGENT_STATE_DIR=str(tmp_path / "state"), KGENT_CONFIG_DIR=os.environ["KGENT_CONFIG_DIR"])
    with ModelServer("hello") as server:
        args = ["run", "--provider", wire, "--model", "test", "--base-url", server.base_url(wire)]
        args += ["--json"] if json_flag else []
        done = subprocess.run(
            [sys.executable, "-c", RUN_AND_LIST, str(out), *args, "say hello"],
            cwd=ws,
            env={**env, "KGENT_API_KEY": "sk-test"},
            stdin=subprocess.DEVNULL,  # not a terminal: the human renderer prints plain text
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert server.requests, "the run reached the model"
    names = json.loads(out.read_text())
    assert "httpx" in names and "kgent.providers.http" in names  # the check saw a real provider's run
    unwanted = NOT_FOR_RUN if json_flag else tuple(m for m in NOT_FOR_RUN if m != "rich")
    assert loaded(names, unwanted) == []


# A run whose tool calls all fit their schemas checks them without jsonschema (kgent.kernel.arguments); ids are random
# bytes, not uuid (which loads platform); the generated methods come from the code cache (kgent.core.codecache); no
# config or rule file is there, so no TOML parser is loaded.
NOT_FOR_A_TOOL_RUN = (
    *NOT_FOR_RUN,
    "jsonschema",
    "referencing",
    "rpds",
    "attr",
    "attrs",
    "uuid",
    "platform",
    "tomllib",
    "importlib.metadata",  # the installed extensions' entry points as remembered (kgent.ext.installed)
)
TOOL_SCRIPT = [
    [{"tool": "read", "args": {"path": "sample.py"}}],
    [{"tool": "read", "args": {"path": "sample.py", "offset": 1, "limit": 5}}],
    [{"tool": "edit", "args": {"path": "sample.py", "oldText": "value = 1", "newText": "value = 2"}}],
    [{"tool": "bash", "args": {"command": "grep -c 'value = 2' sample.py", "timeout": 30}}],
    [{"text": "done", "chunks": 2}],
]


def test_a_run_with_tool_calls_loads_no_schema_validator_or_uuid(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sample.py").write_text("value = 1\n")
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and "API_KEY" not in k}
    env.update(KGENT_STATE_DIR=str(tmp_path / "state"), KGENT_CONFIG_DIR=os.environ["KGENT_CONFIG_DIR"])
    # The entry points' cache (kgent.ext.installed) of this test's own, found once as a first run after an install
    # would: the run then reads it back.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    warm = "from kgent.ext.installed import entry_points; entry_points()"
    subprocess.run([sys.executable, "-c", warm], cwd=ws, env=env, check=True, timeout=120)
    with ModelServer(TOOL_SCRIPT) as server:
        args = ["run", "--json", "--mode", "full", "--base-url", server.base_url("openai"), "--model", "test"]
        done = subprocess.run(
            [sys.executable, "-c", RUN_AND_LIST, str(out), *args, "go"],
            cwd=ws,
            env={**env, "KGENT_API_KEY": "sk-test", "KGENT_PROVIDER": "openai"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert len(server.requests) == len(TOOL_SCRIPT)
    assert (ws / "sample.py").read_text() == "value = 2\n"  # every call ran: none was refused by its check
    assert '"isError":true' not in done.stdout.replace(" ", "")
    names = json.loads(out.read_text())
    assert "kgent.tools.edit" in names and "kgent.core.codecache" in names
    assert loaded(names, NOT_FOR_A_TOOL_RUN) == []


def test_daemon_server_loads_no_mcp_schema_or_terminal_libraries() -> None:
    code = "import json, sys, kgent.daemon.server, kgent.providers.openai\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    names = json.loads(done.stdout)
    assert "kgent.daemon.rpc" in names
    assert loaded(names, NOT_FOR_DAEMON) == []


# argv: none. Import the daemon's server as its loader does, then list the wire models built so far and whether
# pydantic's plugin scan (importlib.metadata over every installed package) ran; then build a first run's models.
BUILT_AT_IMPORT = """import json, sys
import pydantic
import kgent.daemon.server
from kgent.service import wire

def models():
    seen, todo = set(), [wire.Params, wire.Payload]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    return seen

built = sorted(m.__name__ for m in models() if m.__pydantic_complete__)
scanned = "pydantic.plugin._loader" in sys.modules
wire.warm()
print(json.dumps({"built": built, "scanned": scanned, "models": len(models()),
                  "warmed": sorted(m.__name__ for m in models() if m.__pydantic_complete__)}))
"""


def test_the_daemons_server_builds_no_wire_model_until_one_is_used() -> None:
    """~100 wire models (the events' aside): each is built at its first use (defer_build), so the daemon's start builds none and a
    first run only its own (kgent.service.wire.warm)."""
    done = subprocess.run(
        [sys.executable, "-c", BUILT_AT_IMPORT], capture_output=True, text=True, check=True, timeout=120
    )
    found = json.loads(done.stdout)
    assert found["models"] > 80
    assert found["built"] == []
    assert found["scanned"] is False
    assert {"RunParams", "RunResult", "SessionsResult"} <= set(found["warmed"])
    assert len(found["warmed"]) < found["models"] / 4
