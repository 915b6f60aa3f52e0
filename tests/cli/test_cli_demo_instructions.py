"""`kgent demo instructions` as a subprocess: the root's AGENTS.md before the prompt, src/AGENTS.md after the read
that touched src/, both in its session (the scripted provider: no key, no network)."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli import kgent


def test_demo_instructions_loads_the_root_first_and_the_nested_file_after_the_read(tmp_path: Path) -> None:
    out = kgent("demo", "instructions", "--json", cwd=tmp_path, state=tmp_path / "state")
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    types = [e.get("type") for e in events]
    loaded = [e for e in events if e.get("type") == "instructions"]
    assert [[f["source"] for f in e["files"]] for e in loaded] == [["project"], ["directory"]]
    assert loaded[0]["files"][0]["path"].endswith("/AGENTS.md")
    assert loaded[1]["files"][0]["path"].endswith("/src/AGENTS.md")
    assert types.index("instructions") < types.index("user_message")
    read_done = next(
        i for i, e in enumerate(events) if e.get("type") == "tool_update" and e["status"] == "completed"
    )
    assert types.index("instructions", types.index("user_message")) > read_done
