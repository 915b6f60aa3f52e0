"""`kgent run "/name args"`: a prompt template expanded as for every front (the run_start shows the expansion, the
session keeps what was typed); an unknown command is a clear error and no run; `/compact` is a compaction run of `--session`."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli import kgent

SCRIPTED = ("--provider", "scripted", "--model", "hello", "--json")


def test_a_template_runs_from_the_command_line(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    (ws / ".kgent" / "prompts").mkdir(parents=True)
    (ws / ".kgent" / "prompts" / "explain.md").write_text(
        "---\ndescription: Explain\n---\nExplain $1 please.\n"
    )
    out = kgent("run", *SCRIPTED, "/explain", "app.py", cwd=ws, state=state)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    start = next(line for line in lines if line.get("type") == "run_start")
    assert start["prompt"] == "Explain app.py please.\n"
    sid = lines[-1]["result"]["sessionId"]
    stored = json.loads(kgent("sessions", "show", sid, "--json", cwd=ws, state=state).stdout)
    typed = [e for e in stored["entries"] if e.get("typed")]
    assert [e["typed"] for e in typed] == ["/explain app.py"]

    unknown = kgent("run", *SCRIPTED, "/explian app.py", cwd=ws, state=state)
    assert (
        unknown.returncode == 2
        and "unknown command /explian" in unknown.stdout
        and "/explain" in unknown.stdout
    )
    assert "run_start" not in unknown.stdout

    # /compact is the kernel's compaction run, started by the shared service as on every front
    compacted = kgent("run", *SCRIPTED, "--session", sid, "/compact", cwd=ws, state=state)
    assert compacted.returncode == 0, compacted.stderr
    events = [json.loads(line) for line in compacted.stdout.splitlines()]
    kinds = [e.get("type") for e in events]
    assert kinds[0] == "run_start" and events[0]["prompt"] == "/compact"
    assert [e["status"] for e in events if e.get("type") == "compaction"] == ["started", "completed"]
    assert kinds[-2] == "run_end" and events[-1]["result"]["status"] == "settled"
    assert "Nothing to compact yet." in compacted.stdout  # too little history
