"""`kgent run` with three `task` calls in one model turn (issue 41, point 2): the sub-agents run side by side (each
one's command waits for the other two's: no clock), their events interleave in `--json`, the human renderer gives each of their events one line naming its sub-agent, and on a
terminal their approvals are asked one at a time, each naming who asks. Subprocesses, the scripted provider."""

from __future__ import annotations

import contextlib
import json
import re
import time
from pathlib import Path

from test_cli import Terminal, kgent

from helpers import SUB_AGENTS, three_asking_sub_agents


def run_args(script: str, *extra: str) -> tuple[str, ...]:
    return ("run", "--provider", "scripted", "--script", script, "--mode", "ask", *extra, "three jobs")


def command(name: str) -> str:
    return f"python3 -c 'print(\"{name}\")'"


def test_json_each_sub_agents_prompt_names_it_and_the_results_come_in_call_order(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    script = three_asking_sub_agents(tmp_path / "three.json", "All three are done.")
    out = kgent(*run_args(script, "--json"), cwd=tmp_path / "ws", state=tmp_path / "state")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert lines[-1]["result"]["status"] == "settled"
    parent = lines[0]["runId"]
    subs = [line for line in lines if line.get("type") == "subrun"]
    assert all(s["parentRunId"] == parent for s in subs)
    starts = {s["runId"]: s["event"] for s in subs if s["event"]["type"] == "run_start"}
    by_agent = {start["agent"]: rid for rid, start in starts.items()}
    assert sorted(by_agent) == sorted(SUB_AGENTS)

    # each sub-agent's prompt names it (nobody can answer here: each is rejected, and its sub-agent goes on)
    for name, rid in by_agent.items():
        events = [s["event"] for s in subs if s["runId"] == rid]
        [asked] = [e for e in events if e["type"] == "permission_request"]
        assert asked["agent"] == name and asked["toolCall"]["command"] == command(name)
        [resolved] = [e for e in events if e["type"] == "permission_resolved"]
        assert resolved["approved"] is False and resolved["requestId"] == asked["requestId"]
        assert events[-1]["type"] == "run_end" and events[-1]["text"] == f"{name} is done."
    # the second task call's sub-run is Beta's, and each task call's result is its own sub-agent's answer
    finals = {
        e["toolCallId"]: e for e in lines if e.get("type") == "tool_update" and e["status"] == "completed"
    }
    assert starts[finals["t1"]["details"]["runId"]]["agent"] == "Beta"
    assert [finals[f"t{i}"]["output"] for i in range(3)] == [f"{n} is done." for n in SUB_AGENTS]
    [end] = [e for e in lines if e.get("type") == "run_end"]
    assert end["status"] == "settled" and end["text"] == "All three are done."


def barrier(name: str) -> str:
    """A command that says it has started (NAME.ready), then waits until all three sub-agents' have (a bounded wait:
    it fails after about 30 s). Run one at a time, the first would never see the others' and fail."""
    ready = " && ".join(f"[ -e {n}.ready ]" for n in SUB_AGENTS)
    return f"touch {name}.ready; for i in $(seq 600); do {ready} && exit 0; sleep 0.05; done; exit 1"


def test_json_three_sub_agents_run_at_once_and_their_events_interleave(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    calls = [
        {"tool": "task", "id": f"t{i}", "args": {"description": n, "prompt": f"job {n}", "tools": ["bash"]}}
        for i, n in enumerate(SUB_AGENTS)
    ]
    prompts = {
        f"job {n}": [[{"tool": "bash", "args": {"command": barrier(n)}}], [{"text": f"{n} is done."}]]
        for n in SUB_AGENTS
    }
    script = tmp_path / "barrier.json"
    script.write_text(json.dumps({"turns": [calls, [{"text": "All three met."}]], "prompts": prompts}))
    args = ("run", "--provider", "scripted", "--script", str(script), "--mode", "full", "--json", "meet")
    out = kgent(*args, cwd=tmp_path / "ws", state=tmp_path / "state")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    subs = [(i, s) for i, s in enumerate(lines) if s.get("type") == "subrun"]
    by_agent = {s["event"]["agent"]: s["runId"] for _, s in subs if s["event"]["type"] == "run_start"}
    assert sorted(by_agent) == sorted(SUB_AGENTS)

    def at(name: str, kind: str, status: str | None = None) -> int:
        [i] = [
            i
            for i, s in subs
            if s["runId"] == by_agent[name]
            and s["event"]["type"] == kind
            and s["event"].get("name", "bash") == "bash"
            and (status is None or s["event"]["status"] == status)
        ]
        return i

    # each command met the other two: all three ran at once
    for name in SUB_AGENTS:
        assert at(name, "tool_update", "completed") > 0
    # so their events interleave: each one's command ended after every other one's had been announced
    for name in SUB_AGENTS:
        for other in SUB_AGENTS:
            if other != name:
                assert at(other, "tool_call") < at(name, "tool_update", "completed")
    finals = {
        e["toolCallId"]: e for e in lines if e.get("type") == "tool_update" and e["status"] == "completed"
    }
    assert [finals[f"t{i}"]["output"] for i in range(3)] == [f"{n} is done." for n in SUB_AGENTS]
    assert lines[-1]["result"]["status"] == "settled"


def sub_lines(text: str) -> dict[str, list[str]]:
    """The lines that mention each sub-agent's own command or its name as a line's label."""
    found: dict[str, list[str]] = {n: [] for n in SUB_AGENTS}
    for line in text.splitlines():
        for name in SUB_AGENTS:
            if command(name) in line or re.match(rf"  (\? |↳ )?{name}\b", line):
                found[name].append(line)
    return found


def test_human_each_sub_agents_event_is_one_line_that_names_it(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    script = three_asking_sub_agents(tmp_path / "three.json", "All three are done.")
    # a console narrower than the lines: a sub-agent's line is still one line (the terminal folds it, not rich)
    out = kgent(*run_args(script), cwd=tmp_path / "ws", state=tmp_path / "state", env={"COLUMNS": "30"})
    assert out.returncode == 0, out.stderr
    for name, lines in sub_lines(out.stdout).items():
        label = re.compile(rf"  (\? |↳ )?{name}\b")
        # the command only ever on its own agent's line
        assert all(label.match(line) for line in lines), lines
        started, call, asked, rejected, failed, settled = lines
        assert started.startswith(f"  ↳ {name} started (run-")
        assert call == f"  {name} ▶ Run `{command(name)}`"
        assert asked == f"  ? {name} asks (high risk): Run `{command(name)}`"
        assert rejected.startswith(f"  {name}   rejected")  # nobody to answer: rejected, said whose
        assert failed == f"  {name}   ✗ Run `{command(name)}`"
        assert settled == f"  ↳ {name} settled after 2 turn(s)"
    assert "All three are done." in out.stdout


def next_question(term: Terminal, answered: list[str], within: float = 60) -> str:
    """The sub-agent whose question the terminal shows now: the one question of a sub-agent not answered yet (the
    one answered last may be shown again meanwhile, after a line printed while its answer was on its way)."""
    deadline = time.monotonic() + within
    while True:
        shown = set(re.findall(r"  (\w+): allow\? \[y/a/", term.out.decode(errors="replace")))
        asking = shown - set(answered)
        assert len(asking) <= 1, term.out.decode(errors="replace")
        if asking:
            return asking.pop()
        assert time.monotonic() < deadline, f"no new question in {term.out.decode(errors='replace')}"
        with contextlib.suppress(AssertionError):  # read what has come (the marker never does)
            term.read_until(b"\0", 0.1)


def test_on_a_terminal_the_sub_agents_approvals_are_asked_one_at_a_time_each_naming_who_asks(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    script = three_asking_sub_agents(tmp_path / "three.json", "All three are done.")
    term = Terminal(*run_args(script), cwd=tmp_path / "ws", state=tmp_path / "state")
    # all three sub-agents have asked before anyone answered: they run side by side
    for name in SUB_AGENTS:
        term.read_until(f"? {name} asks".encode(), 60)
    term.read_until(b"allow? [y/a/", 60)
    answered: list[str] = []
    transcript = b""
    for _ in SUB_AGENTS:
        # one question on the terminal at a time (shown again after each line printed meanwhile), naming who asks
        name = next_question(term, answered)
        # the prompt names the call it is about, with its sub-agent's name
        assert f"  {name}: Run `{command(name)}`".encode() in term.out, term.out
        answered.append(name)
        transcript += term.out
        term.out = b""
        term.type(b"y\n")
    term.read_until(b"All three are done.", 60)
    assert term.exit_code() == 0
    text = (transcript + term.out).decode(errors="replace")
    assert sorted(answered) == sorted(SUB_AGENTS)
    for name in SUB_AGENTS:  # each answer reached its own sub-agent: its own command ran
        assert f"  {name}   ✓ Run `{command(name)}`" in text.replace("\r\n", "\n")
