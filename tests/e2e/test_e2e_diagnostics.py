"""The editor's diagnostics after edits (protocol.md § Diagnostics): a host that declares `capabilities.diagnostics`
is asked `agent/diagnostics` before a file's first change and after each one; what is new reaches the model's tool
result and the tool_update; a host that does not answer costs `fsTimeout` once, the request withdrawn, and is not
asked again during the run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from kgent_host import KgentHost

SAMPLE = "value = 1\nprint(value)\n"
BREAK = {"tool": "edit", "args": {"path": "sample.py", "oldText": "print(value)", "newText": "print(valu)"}}
FIX = {"tool": "edit", "args": {"path": "sample.py", "oldText": "print(valu)", "newText": "print(value)"}}
UNDEFINED = {
    "line": 2,
    "column": 7,
    "severity": "error",
    "message": "Undefined name `valu`",
    "source": "Ruff",
    "code": "F821",
}


def script_of(tmp_path: Path, *calls: dict[str, Any]) -> str:
    """A scripted model making these tool calls, one per turn, then answering."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": [[c] for c in calls] + [[{"text": "Done."}]]}))
    return str(path)


def _done(h: KgentHost, run_id: str) -> list[dict[str, Any]]:
    return [
        e["event"]
        for e in h.events[run_id]
        if e["event"]["type"] == "tool_update" and e["event"]["status"] == "completed"
    ]


def _editor(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """An editor whose language server reads the disk: `valu` is undefined, `value` is fine."""
    assert method == "agent/diagnostics"
    text = Path(params["path"]).read_text()
    return {"diagnostics": [UNDEFINED] if "valu)" in text else []}


async def test_the_editors_new_diagnostic_reaches_the_model_and_the_fix_reports_none(
    spawn: Any, workspace: Path, tmp_path: Path
) -> None:
    h: KgentHost = await spawn(initialize=False)
    h.start_drain()
    await h.initialize(capabilities={"diagnostics": True})
    h.files = _editor
    run_id, end, _ = await h.run_to_end(
        prompt="break, then fix", workspace=str(workspace), model=script_of(tmp_path, BREAK, FIX), mode="auto"
    )
    assert end["status"] == "settled"
    broken, fixed = _done(h, run_id)
    assert broken["diagnostics"] == [{"path": "sample.py", **UNDEFINED}]
    assert "sample.py:2:7: error F821 Undefined name `valu` (Ruff)" in broken["output"]
    assert fixed["diagnostics"] == [] and "Undefined" not in fixed["output"]
    asked = [(m, p["path"]) for m, p in h.file_requests]
    target = str(workspace / "sample.py")
    assert asked == [("agent/diagnostics", target)] * 3  # the baseline, after the break, after the fix
    assert all(p["runId"] == run_id for _, p in h.file_requests)


async def test_an_editor_that_does_not_answer_costs_the_timeout_once(
    spawn: Any, workspace: Path, tmp_path: Path
) -> None:
    h: KgentHost = await spawn(initialize=False)
    h.start_drain()
    await h.initialize(capabilities={"diagnostics": True}, fsTimeout=0.5)
    never: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def silent(method: str, params: dict[str, Any]) -> Any:
        return await never

    h.files = silent
    run_id, end, _ = await h.run_to_end(
        prompt="break, then fix", workspace=str(workspace), model=script_of(tmp_path, BREAK, FIX), mode="auto"
    )
    assert end["status"] == "settled"
    broken, fixed = _done(h, run_id)
    note = "[kgent: the editor did not answer agent/diagnostics within 0.5 s; no diagnostics for the rest of this run]"
    assert broken["output"].count(note) == 1 and note not in fixed["output"]
    assert "diagnostics" not in broken and "diagnostics" not in fixed
    assert len(h.file_requests) == 1  # the baseline that timed out; never asked again in the run
    assert len(h.withdrawn) == 1
    assert (workspace / "sample.py").read_text() == SAMPLE  # both edits applied


async def test_a_host_without_the_capability_is_never_asked(
    host: KgentHost, workspace: Path, tmp_path: Path
) -> None:
    run_id, end, _ = await host.run_to_end(
        prompt="break", workspace=str(workspace), model=script_of(tmp_path, BREAK), mode="auto"
    )
    assert end["status"] == "settled"
    (broken,) = _done(host, run_id)
    assert "diagnostics" not in broken and host.file_requests == []
