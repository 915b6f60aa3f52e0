"""The `kgent` command as a user meets it: subprocesses, real files, the scripted provider (no key, no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import processes_with


def kgent(
    *args: str, cwd: Path, state: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and "API_KEY" not in k}
    full_env.update(
        {"KGENT_STATE_DIR": str(state), "KGENT_CONFIG_DIR": str(state / "config"), "COLUMNS": "200"},
        **(env or {}),
    )
    return subprocess.run(
        [sys.executable, "-m", "kgent", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "sample.py").write_text("value = 1\nprint(value)\n")
    return tmp_path / "ws"


def test_demo_shows_read_edit_approval_bash_answer_and_patch(tmp_path: Path) -> None:
    out = kgent("demo", "tool-loop", cwd=tmp_path, state=tmp_path / "state")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    order = [
        "▶ Read sample.py",
        "▶ Edit sample.py",
        "approval needed",
        "✓ Edit sample.py",
        "▶ Run `grep",
        "Updated sample.py",
        "diff --git a/sample.py",
    ]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "settled" in text


def test_demo_lists_every_scenario_and_the_guide_shows_each(tmp_path: Path) -> None:
    from kgent.cli.demo import SCENARIOS

    out = kgent("demo", cwd=tmp_path, state=tmp_path / "state")
    assert out.returncode == 0, out.stderr
    listed = [line.split()[2] for line in out.stdout.splitlines() if line.startswith("  kgent demo ")]
    assert listed == list(SCENARIOS)
    guide = (Path(__file__).resolve().parents[2] / "docs" / "demos.md").read_text(encoding="utf-8")
    for name in SCENARIOS:
        assert f"kgent demo {name}" in guide, name


def test_demo_streamed_run_prints_the_whole_lifecycle_as_json_lines(tmp_path: Path) -> None:
    out = kgent("demo", "streamed-run", cwd=tmp_path, state=tmp_path / "state")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    events = [json.loads(line) for line in lines]  # every line one JSON object
    assert all(isinstance(e, dict) for e in events) and len(events) == len(lines)
    types = [e["type"] for e in events]
    assert types[0] == "run_start" and types[-1] == "run_end" and types.count("run_end") == 1
    assert types.index("user_message") < types.index("message_delta") < types.index("message_end")
    kinds = [e["kind"] for e in events if e["type"] == "message_delta"]
    assert kinds.index("thinking") < kinds.index("text")
    assert events[-1]["status"] == "settled" and events[-1]["text"].startswith(
        "Hello from the scripted provider"
    )
    assert kgent("demo", "streamed-run", "--text", cwd=tmp_path, state=tmp_path / "state").stdout[0] != "{"


def test_demo_risk_based_asks_nobody(tmp_path: Path) -> None:
    out = kgent("demo", "risk-based", "--json", cwd=tmp_path, state=tmp_path / "state")
    assert out.returncode == 0, out.stdout + out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert not [e for e in events if e.get("type") == "permission_request"]
    denied = [e for e in events if e.get("type") == "permission_resolved"]
    assert denied and all(e["source"] == "policy" and not e["approved"] for e in denied)
    assert events[-1]["type"] == "run_end" and events[-1]["status"] == "settled"


@pytest.mark.parametrize(
    ("case", "status", "shown"),
    [
        ("failure", "failed", '"code": "scripted_error"'),
        ("denied", "settled", "permission_denied: the user rejected this call"),
        ("cancel", "cancelled", '"status": "cancelled"'),
    ],
)
def test_demo_failure_scenarios_end_as_they_should(
    tmp_path: Path, case: str, status: str, shown: str
) -> None:
    out = kgent("demo", case, "--json", cwd=tmp_path, state=tmp_path / "state")
    assert out.returncode == 0, out.stdout + out.stderr  # 0: the run ended the way the scenario shows
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    ends = [e for e in lines if e.get("type") == "run_end"]
    assert len(ends) == 1 and ends[0]["status"] == status, ends
    assert shown in out.stdout


def test_demo_task_shows_the_sub_agent_its_approval_and_its_answer(tmp_path: Path) -> None:
    out = kgent("demo", "task", cwd=tmp_path, state=tmp_path / "state")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    order = [
        "▶ Sub-agent: Check sample.py",
        "↳ Check sample.py started",
        "Check sample.py ▶ Read sample.py",
        "? Check sample.py asks",
        "↳ Check sample.py settled",
        "✓ Sub-agent: Check sample.py",
        "The sub-agent ran sample.py: it prints 1.",
    ]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)


def test_demo_plan_shows_the_plan_as_it_changes(tmp_path: Path) -> None:
    out = kgent("demo", "plan", cwd=tmp_path, state=tmp_path / "state")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("plan:") == 3 and "✓ Explain what it prints" in out.stdout


def test_run_json_streams_events_and_ends_with_the_result(ws: Path) -> None:
    out = kgent(
        "run",
        "--provider",
        "scripted",
        "--model",
        "tool-loop",
        "--mode",
        "full",
        "--json",
        "set value",
        cwd=ws,
        state=ws.parent / "state",
    )
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    types = [line.get("type") for line in lines]
    assert types[0] == "run_start" and types.count("run_end") == 1
    end = next(line for line in lines if line.get("type") == "run_end")
    assert (
        end["status"] == "settled" and end["changedPaths"] == ["sample.py"] and "+value = 2" in end["patch"]
    )
    assert lines[-1]["result"]["status"] == "settled"
    assert (ws / "sample.py").read_text().startswith("value = 2")


@pytest.mark.parametrize("output", ["--json", "--human"])
def test_a_reader_that_stops_reading_stops_the_run_quietly(ws: Path, output: str) -> None:
    """`kgent run ... | head -1`: once stdout's reader has gone the run is cancelled (its session kept) and the
    command ends as a closed pipe ends one (141), with nothing on stderr. It used to hang at exit, after tracebacks."""
    state = ws.parent / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and "API_KEY" not in k}
    env.update(KGENT_STATE_DIR=str(state), KGENT_CONFIG_DIR=str(state / "config"))
    flags = ["--json"] if output == "--json" else []
    # more is written 2 s after the first lines: by then the reader has surely gone, whatever the machine's load
    script = ws.parent / "pause.json"
    script.write_text(json.dumps({"turns": [[{"text": "first"}, {"sleep": 2}, {"text": " second"}]]}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgent", "run", "--provider", "scripted", "--model", str(script), *flags, "go"],
        cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline()  # the first line, as `head -1` reads it
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(60) == 141, stderr
    assert stderr == ""
    sessions = list((state / "sessions").rglob("*.jsonl"))
    assert len(sessions) == 1  # the run's session is there to resume


def test_without_a_terminal_approvals_are_rejected(ws: Path) -> None:
    out = kgent(
        "run",
        "--provider",
        "scripted",
        "--model",
        "tool-loop",
        "--mode",
        "ask",
        "--json",
        "set value",
        cwd=ws,
        state=ws.parent / "state",
    )
    assert out.returncode == 0  # the run settles; the model was told permission_denied
    resolved = [json.loads(x) for x in out.stdout.splitlines() if '"permission_resolved"' in x]
    assert [r["approved"] for r in resolved] == [False, False]
    assert (ws / "sample.py").read_text().startswith("value = 1")


def test_failed_run_exits_nonzero(ws: Path) -> None:
    out = kgent(
        "run", "--provider", "scripted", "--model", "provider-error", "x", cwd=ws, state=ws.parent / "state"
    )
    assert out.returncode == 1
    assert "The scripted provider failed." in out.stdout


def test_missing_key_says_exactly_what_to_set(ws: Path) -> None:
    out = kgent("run", "hello", cwd=ws, state=ws.parent / "state")
    assert out.returncode == 2
    assert "KGENT_API_KEY or DEEPSEEK_API_KEY" in out.stdout and "https://api.deepseek.com" in out.stdout


def test_unknown_mode_and_unknown_session_are_clear_errors(ws: Path) -> None:
    out = kgent("run", "--provider", "scripted", "--mode", "yolo", "x", cwd=ws, state=ws.parent / "state")
    assert out.returncode == 2 and "plan" in out.stdout and "full" in out.stdout
    out = kgent("run", "--provider", "scripted", "--session", "nope", "x", cwd=ws, state=ws.parent / "state")
    assert out.returncode == 2 and "no session 'nope'" in out.stdout


def test_resume_sees_the_earlier_conversation(ws: Path) -> None:
    state = ws.parent / "state"
    first = kgent("run", "--provider", "scripted", "--model", "hello", "--json", "first", cwd=ws, state=state)
    sid = json.loads(first.stdout.splitlines()[-1])["result"]["sessionId"]
    second = kgent(
        "run",
        "--provider",
        "scripted",
        "--model",
        "hello",
        "--json",
        "--session",
        sid,
        "second",
        cwd=ws,
        state=state,
    )
    assert second.returncode == 0
    listing = kgent("sessions", "show", sid, cwd=ws, state=state).stdout
    assert "user: first" in listing and "user: second" in listing


def test_debug_repl_runs_lines_in_one_session(ws: Path) -> None:
    out = kgent(
        "debug",
        "--provider",
        "scripted",
        "--model",
        "hello",
        cwd=ws,
        state=ws.parent / "state",
        stdin="one\ntwo\n/history\nexit\n",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("=== FINAL ANSWER ===") == 2
    assert "user: one" in out.stdout and "user: two" in out.stdout


def test_help_lists_every_subcommand(tmp_path: Path) -> None:
    out = kgent("--help", cwd=tmp_path, state=tmp_path)
    for name in ("run", "demo", "debug", "serve", "acp", "sessions", "rules"):
        assert name in out.stdout


def test_no_subcommand_is_a_usage_error_on_stderr(tmp_path: Path) -> None:
    # An editor that spawned plain `kgent` reads JSON-RPC on stdout and shows stderr: the usage must go there.
    out = kgent(cwd=tmp_path, state=tmp_path)
    assert out.returncode == 2
    assert out.stdout == ""
    assert "usage: kgent" in out.stderr


class Terminal:
    """`kgent` on a pseudo-terminal, as a person at a shell runs it."""

    def __init__(self, *args: str, cwd: Path, state: Path) -> None:
        import pty

        env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and "API_KEY" not in k}
        env.update(KGENT_STATE_DIR=str(state), COLUMNS="200", TERM="dumb")
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: never returns
            os.chdir(cwd)
            os.execve(sys.executable, [sys.executable, "-m", "kgent", *args], env)
        self.out = b""

    def read_until(self, marker: bytes, seconds: float = 30) -> None:
        import select
        import time

        deadline = time.monotonic() + seconds
        while marker not in self.out:
            assert time.monotonic() < deadline, f"no {marker!r} in {self.out.decode(errors='replace')}"
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                assert chunk, f"kgent left before {marker!r}: {self.out.decode(errors='replace')}"
                self.out += chunk

    def type(self, text: bytes) -> None:
        os.write(self.fd, text)

    def exit_code(self, seconds: float = 30) -> int:
        import time

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self.read_until(b"\0", 0.1)  # drain; the marker never comes
            except AssertionError:
                pass
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        raise AssertionError(f"kgent did not exit: {self.out.decode(errors='replace')}")


def test_on_a_terminal_approvals_are_asked_and_answered(ws: Path) -> None:
    term = Terminal(
        "run",
        "--provider",
        "scripted",
        "--model",
        "tool-loop",
        "set value",
        cwd=ws,
        state=ws.parent / "state",
    )
    # the edit: its 'always' options say the rule and how long it lasts
    term.read_until(b"[a] Allow edits to `sample.py` this session")
    term.read_until(b"allow? [y/a/")
    term.out = b""
    term.type(b"y\n")
    term.read_until(b"allow? [y/a/")  # then the bash command
    term.type(b"y\n")
    assert term.exit_code() == 0
    assert (ws / "sample.py").read_text().startswith("value = 2")


def test_ctrl_c_at_an_approval_prompt_cancels_the_run_at_once(ws: Path) -> None:
    term = Terminal(
        "run",
        "--provider",
        "scripted",
        "--model",
        "tool-loop",
        "set value",
        cwd=ws,
        state=ws.parent / "state",
    )
    term.read_until(b"allow? [y/a/")
    term.type(b"\x03")  # the terminal turns it into SIGINT; nobody presses Enter afterwards
    assert term.exit_code() == 1  # without Enter: waiting for it, it would never exit
    assert b"cancelled" in term.out
    assert (ws / "sample.py").read_text().startswith("value = 1")


def test_markup_like_text_in_commands_and_answers_is_printed_as_is(ws: Path) -> None:
    script = ws.parent / "brackets.json"
    command = "echo '[/x] [bold]not bold'\ntouch second-line"
    script.write_text(
        json.dumps([[{"tool": "bash", "args": {"command": command}}], [{"text": "done [/y] :x:"}]])
    )
    out = kgent(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(script),
        "--mode",
        "ask",
        "go",
        cwd=ws,
        state=ws.parent / "state",
    )
    assert out.returncode == 0, out.stderr
    assert (
        "echo '[/x] [bold]not bold'\ntouch second-line" in out.stdout
    )  # the whole command, for the approval
    assert "done [/y] :x:" in out.stdout


def test_provider_model_and_mode_come_from_the_environment(ws: Path) -> None:
    env = {"KGENT_PROVIDER": "scripted", "KGENT_MODEL": "tool-loop", "KGENT_PERMISSION_MODE": "risk_based"}
    out = kgent("run", "--json", "set value", cwd=ws, state=ws.parent / "state", env=env)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    start = lines[0]
    assert (start["provider"], start["model"], start["mode"]) == ("scripted", "tool-loop", "risk_based")
    # risk_based asks nothing: the workspace edit (medium) runs, `… && python3 sample.py` (high: runs code) is denied
    assert not [line for line in lines if line.get("type") == "permission_request"]
    denied = [line for line in lines if line.get("type") == "permission_resolved" and not line["approved"]]
    assert [(d["source"], d["decision"]) for d in denied] == [("policy", "reject_once")]
    assert "risk_based mode denies high-risk calls" in denied[0]["reason"]
    assert (ws / "sample.py").read_text().startswith("value = 2")


def test_continue_resumes_the_workspaces_latest_session(ws: Path) -> None:
    state = ws.parent / "state"
    none = kgent("run", "-c", "--provider", "scripted", "--model", "hello", "x", cwd=ws, state=state)
    assert none.returncode == 2 and "no session to continue in" in none.stdout
    ids = []
    for prompt in ("first", "second"):
        out = kgent(
            "run", "--provider", "scripted", "--model", "hello", "--json", prompt, cwd=ws, state=state
        )
        ids.append(json.loads(out.stdout.splitlines()[-1])["result"]["sessionId"])
    assert ids[0] != ids[1]
    again = kgent("run", "--continue", "--json", "third", cwd=ws, state=state)
    assert again.returncode == 0, again.stdout
    assert json.loads(again.stdout.splitlines()[-1])["result"]["sessionId"] == ids[1]
    short = kgent("run", "-c", "--json", "fourth", cwd=ws, state=state)
    assert json.loads(short.stdout.splitlines()[-1])["result"]["sessionId"] == ids[1]
    both = kgent("run", "-c", "--session", ids[0], "x", cwd=ws, state=state)
    assert both.returncode == 2 and "not both" in both.stdout


def test_resume_from_another_directory_runs_in_the_sessions_workspace(ws: Path) -> None:
    state = ws.parent / "state"
    first = kgent("run", "--provider", "scripted", "--model", "hello", "--json", "first", cwd=ws, state=state)
    sid = json.loads(first.stdout.splitlines()[-1])["result"]["sessionId"]
    elsewhere = ws.parent / "elsewhere"
    elsewhere.mkdir()
    # no --provider: the session's provider and model are reused (no key needed for the scripted one)
    again = kgent("run", "--json", "--session", sid, "second", cwd=elsewhere, state=state)
    assert again.returncode == 0, again.stdout
    start = json.loads(again.stdout.splitlines()[0])
    assert start["workspace"] == str(ws.resolve()) and start["provider"] == "scripted"
    wrong = kgent("run", "--session", sid, "--workspace", str(elsewhere), "third", cwd=elsewhere, state=state)
    assert wrong.returncode == 2 and "belongs to" in wrong.stdout


def test_debug_once_exit_code_follows_the_run(ws: Path) -> None:
    ok = kgent(
        "debug", "--provider", "scripted", "--model", "hello", "--once", "hi", cwd=ws, state=ws.parent / "s"
    )
    bad = kgent(
        "debug",
        "--provider",
        "scripted",
        "--model",
        "provider-error",
        "--once",
        "hi",
        cwd=ws,
        state=ws.parent / "s",
    )
    assert (ok.returncode, bad.returncode) == (0, 1)


def test_seed_quick_start_calculates_without_a_key(ws: Path) -> None:
    out = kgent("debug", "--once", "calculate 12 * 8 + 6", cwd=ws, state=ws.parent / "s")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "[no API key]" in out.stdout and "provider=scripted model=calculate" in out.stdout
    assert "Calculate 12 * 8 + 6" in out.stdout  # the calculator tool ran
    assert "FINAL ANSWER ===: 12 * 8 + 6 = 102" in out.stdout


def test_debug_with_a_key_does_not_fall_back_to_the_script(ws: Path) -> None:
    out = kgent(
        "debug",
        "--once",
        "calculate 12 * 8 + 6",
        cwd=ws,
        state=ws.parent / "s",
        env={"KGENT_BASE_URL": "http://127.0.0.1:9", "KGENT_MAX_TURNS": "1"},
    )
    assert "[no API key]" not in out.stdout and "provider=openai" in out.stdout


def test_the_sandbox_is_named_at_start(ws: Path) -> None:
    out = kgent(
        "run",
        "--provider",
        "scripted",
        "--model",
        "hello",
        "--mode",
        "ask",
        "hi",
        cwd=ws,
        state=ws.parent / "state",
    )
    assert out.returncode == 0, out.stderr
    from kgent.sandbox.bwrap import detect

    expected = "bwrap — reads run unasked" if detect().contains else "every shell command asks"
    assert "sandbox:" in out.stdout and expected in out.stdout
    off = kgent(
        "run",
        "--provider",
        "scripted",
        "--model",
        "hello",
        "--json",
        "hi",
        cwd=ws,
        state=ws.parent / "state",
        env={"KGENT_SANDBOX": "none"},
    )
    assert json.loads(off.stdout.splitlines()[-1])["result"]["sandbox"] == "none"


def test_closing_the_terminal_cancels_the_run_and_its_command(ws: Path) -> None:
    """SIGHUP (the terminal went away) cancels like Ctrl-C: run_end cancelled, the command's process group killed."""
    import signal
    import time

    script = ws.parent / "ticks.json"
    marker = f"kgent-sighup-probe-{os.getpid()}"
    command = f"echo $$ > shell.pid; while true; do echo tick >> ticks.txt; sleep 0.05; done # {marker}"
    script.write_text(json.dumps([[{"tool": "bash", "args": {"command": command}}], [{"text": "never"}]]))
    term = Terminal(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(script),
        "--mode",
        "full",
        "go",
        cwd=ws,
        state=ws.parent / "state",
    )
    deadline = time.monotonic() + 30
    while not (ws / "ticks.txt").exists():
        assert time.monotonic() < deadline, term.out
        time.sleep(0.05)
    shell = int((ws / "shell.pid").read_text())
    os.kill(term.pid, signal.SIGHUP)
    assert term.exit_code(seconds=20) == 1
    assert b"cancelled" in term.out
    assert processes_with(marker) == []  # the shell writing the ticks is gone: nothing is still writing
    with pytest.raises(ProcessLookupError):
        os.kill(shell, 0)


async def test_resuming_another_providers_session_never_carries_kgent_api_key(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KGENT_API_KEY belongs to the configured provider (DeepSeek here): a resumed Anthropic session gets
    ANTHROPIC_API_KEY or no key at all, never it."""
    import argparse

    from kgent.cli.run import resume_defaults, run_request, run_service
    from kgent.cli.terminal import TerminalPort
    from kgent.core.errors import ConfigError
    from kgent.session.entries import new_entry
    from kgent.session.jsonl import JsonlSessionStore

    state = ws.parent / "state"
    monkeypatch.setenv("KGENT_STATE_DIR", str(state))
    monkeypatch.setenv("KGENT_API_KEY", "sk-kgent-for-deepseek-0001")
    store = JsonlSessionStore(state / "sessions")
    await store.create(workspace=str(ws), session_id="claude1")
    await store.append(
        "claude1", [new_entry("config", None, mode="ask", provider="anthropic", model="claude-x")]
    )
    await store.aclose()

    def args() -> argparse.Namespace:
        return argparse.Namespace(
            session="claude1",
            workspace=None,
            fork=None,
            provider=None,
            model=None,
            base_url=None,
            mode=None,
            script=None,
            max_turns=None,
            cost_limit=None,
        )

    def provider(a: argparse.Namespace) -> Any:
        """The provider settings the shared service gives the resumed session's run."""
        request = run_request(a, "go on")
        service = run_service(a, TerminalPort(None, interactive=False))
        return service.provider_config(request.provider, request.model)

    first = args()
    await resume_defaults(first)
    with pytest.raises(ConfigError) as missing:
        provider(first)
    assert "ANTHROPIC_API_KEY" in missing.value.message
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-own-key-0002")
    second = args()
    await resume_defaults(second)
    config = provider(second)
    assert (config.provider, config.model, config.api_key) == ("anthropic", "claude-x", "sk-ant-own-key-0002")


def test_the_end_of_a_run_shows_tokens_and_cost(ws: Path) -> None:
    from kgent.testing import ModelServer

    with ModelServer("tool-loop") as server:
        out = kgent(
            "run",
            "--provider",
            "anthropic",
            "--base-url",
            server.anthropic_base_url,
            "--model",
            "claude-sonnet-4-5",
            "--mode",
            "full",
            "set value",
            cwd=ws,
            state=ws.parent / "state",
        )
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("tokens: "))
    assert (
        " input (" in line
        and " from cache, " in line
        and " to cache) · " in line
        and " output · cost ≈ $0.0" in line
    ), line
    scripted = kgent(
        "run", "--provider", "scripted", "--model", "hello", "hi", cwd=ws, state=ws.parent / "state"
    )
    assert "cost unknown: no price for this model (KGENT_PRICES)" in scripted.stdout
    prices = ws.parent / "prices.json"
    prices.write_text(json.dumps({"models": {"hello": {"input": 100, "output": 100}}}))
    priced = kgent(
        "run",
        "--provider",
        "scripted",
        "--model",
        "hello",
        "hi",
        cwd=ws,
        state=ws.parent / "state",
        env={"KGENT_PRICES": str(prices)},
    )
    assert "cost ≈ $0.00" in priced.stdout, priced.stdout


def test_cost_limit_flag_stops_the_run(ws: Path) -> None:
    from kgent.testing import ModelServer

    with ModelServer("tool-loop") as server:
        # The four calls of tool-loop on Claude Sonnet cost about $0.015 in all: the first about $0.011 (it writes the
        # cache of the prompt and the tool schemas), then about $0.001 each: the limit stops it after one or two.
        out = kgent(
            "run",
            "--provider",
            "anthropic",
            "--base-url",
            server.anthropic_base_url,
            "--model",
            "claude-sonnet-4-5",
            "--cost-limit",
            "0.012",
            "--mode",
            "full",
            "set value",
            cwd=ws,
            state=ws.parent / "state",
        )
    assert out.returncode == 1, out.stdout
    assert "failed (cost_limit)" in out.stdout and "limit of $0.0120" in out.stdout, out.stdout
    assert 1 <= len(server.requests) < 4  # it stopped between model calls
    bad = kgent("run", "--provider", "scripted", "--cost-limit", "1", "x", cwd=ws, state=ws.parent / "state")
    assert bad.returncode == 2 and "needs the price of model 'hello'" in bad.stdout


def test_max_turns_flag_and_environment_end_the_run(ws: Path) -> None:
    state = ws.parent / "state"
    common = ("--provider", "scripted", "--model", "tool-loop", "--mode", "full", "set value")
    flag = kgent("run", "--max-turns", "1", *common, cwd=ws, state=state, env={"KGENT_MAX_TURNS": "9"})
    assert flag.returncode == 1 and "failed (max_turns)" in flag.stdout, flag.stdout
    env = kgent("run", *common, cwd=ws, state=state, env={"KGENT_MAX_TURNS": "2"})
    assert env.returncode == 1 and "failed (max_turns)" in env.stdout, env.stdout
    bad = kgent("run", *common, cwd=ws, state=state, env={"KGENT_MAX_TURNS": "lots"})
    assert bad.returncode == 2 and "KGENT_MAX_TURNS must be a positive integer" in bad.stdout, bad.stdout


def test_demo_extension_shows_a_tool_a_denial_and_a_failing_hook_by_name(tmp_path: Path) -> None:
    out = kgent("demo", "extension", "--json", cwd=tmp_path, state=tmp_path / "state")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    done = [e["output"] for e in lines if e.get("type") == "tool_update" and e["status"] != "in_progress"]
    assert done == [
        "3 words",
        "permission_denied: extension 'guard' denied this call: recursive deletes are not allowed in this project",
        "hook_error: extension 'flaky': its after_tool_call hook failed: ConnectionError: the audit log server is "
        "unreachable",
    ]
    assert not [e for e in lines if e.get("type") == "permission_request"]  # denied before anyone was asked


TRUST_EXT = (
    "from kgent.tools import CalculatorTool\n"
    "def register(api):\n    t = CalculatorTool(); t.name = 'project_calc'; api.tool(t)\n"
)


def test_kgent_run_asks_once_to_trust_a_projects_own_extensions(tmp_path: Path, ws: Path) -> None:
    import pty

    (ws / ".kgent").mkdir()
    (ws / ".kgent" / "calc.py").write_text(TRUST_EXT)
    (ws / ".kgent" / "config.toml").write_text('[extensions]\nload = [".kgent/calc.py"]\n')
    script = tmp_path / "calc.json"
    script.write_text(
        json.dumps([[{"tool": "project_calc", "args": {"expression": "2+3"}}], [{"text": "ok"}]])
    )
    state = tmp_path / "state"
    args = ("run", "--provider", "scripted", "--script", str(script), "--mode", "full", "add")
    untrusted = kgent(*args, cwd=ws, state=state)  # no terminal: not asked, left out, said so
    assert "not running this project's own extensions" in untrusted.stderr
    assert "Unknown tool: project_calc" in untrusted.stdout
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and "API_KEY" not in k}
    env.update(KGENT_STATE_DIR=str(state), KGENT_CONFIG_DIR=str(state / "config"), COLUMNS="200")
    main, sub = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgent", *args],
        cwd=ws,
        stdin=sub,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    os.close(sub)
    os.write(main, b"y\n")  # the first-run question reads this line
    out, err = proc.communicate(timeout=120)
    os.close(main)
    assert proc.returncode == 0, err
    assert "Trust this project and run it? [y/N]" in out + err and "- extension .kgent/calc.py" in err
    assert "\n5\n" in out
    trusted = kgent(*args, cwd=ws, state=state)  # remembered: not asked again
    assert (
        trusted.returncode == 0 and "Trust this project" not in trusted.stderr and "\n5\n" in trusted.stdout
    )
    listed = kgent("extensions", "--json", cwd=ws, state=state)
    assert json.loads(listed.stdout)["project"]["trusted"] is True


def test_kgent_extensions_lists_what_is_configured_and_why_it_did_not_load(tmp_path: Path, ws: Path) -> None:
    state = tmp_path / "state"
    (state / "config").mkdir(parents=True)
    (state / "config" / "broken.py").write_text("def register(api):\n    api.hook('before_lunch', print)\n")
    (state / "config" / "config.toml").write_text(
        f'[extensions]\nload = ["{state / "config" / "broken.py"}"]\n'
    )
    (ws / ".mcp.json").write_text(
        '{"mcpServers": {"git": {"command": "mcp-server-git", "args": ["-r", "."]}}}'
    )
    out = kgent("extensions", cwd=ws, state=state)
    assert out.returncode == 1, out.stderr  # an extension failed to load
    assert f"project {ws.resolve()}: NOT trusted (kgent extensions --trust)" in out.stdout
    assert "broken [user] failed" in out.stdout
    assert "error: extension 'broken': hook 'before_lunch': unknown hook" in out.stdout
    assert "git [project, stdio] untrusted: mcp-server-git -r ." in out.stdout


def test_kgent_rules_adds_lists_and_removes_project_user_and_session_rules(ws: Path) -> None:
    state = ws.parent / "state"
    added = kgent("rules", "add", "bash(npm test *)", cwd=ws, state=state)
    assert added.returncode == 0, added.stderr
    assert "allow `npm test` with any arguments in this project" in added.stdout
    # the project is not trusted: the rule is kept in the user's own file for it, where it counts
    (personal,) = (state / "config" / "projects").glob("ws-*.toml")
    assert f"({personal})" in added.stdout and not (ws / ".kgent").exists()
    assert personal.read_text().endswith('[permissions]\nallow = [\n    "bash(npm test *)",\n]\n')
    assert kgent("rules", "add", "--user", "--deny", "bash(git push:*)", cwd=ws, state=state).returncode == 0
    bad = kgent("rules", "add", "bash(python3 *)", cwd=ws, state=state)
    assert bad.returncode == 2 and "only exact commands" in bad.stderr
    listing = kgent("rules", "--json", cwd=ws, state=state)
    data = json.loads(listing.stdout)
    assert [(r["rule"], r["decision"], r["scope"]) for r in data["rules"]] == [
        ("bash(git push *)", "deny", "user"),
        ("bash(npm test *)", "allow", "project"),
    ]
    assert data["projectTrusted"] is False
    text = kgent("rules", cwd=ws, state=state).stdout
    assert (
        "the allow rules in its own file are ignored" in text
        and f"your project rules: {personal}" in text
        and "deny `git push` with any arguments in every project" in text
    )
    removed = kgent("rules", "remove", "bash(npm test *)", cwd=ws, state=state)
    assert removed.returncode == 0 and "removed" in removed.stdout
    assert kgent("rules", "remove", "bash(npm test *)", cwd=ws, state=state).returncode == 1
    # trusted, the project's own file takes project rules
    assert kgent("extensions", "--trust", cwd=ws, state=state).returncode == 0
    assert kgent("rules", "add", "bash(make *)", cwd=ws, state=state).returncode == 0
    assert (ws / ".kgent" / "config.toml").read_text() == '[permissions]\nallow = [\n    "bash(make *)",\n]\n'


def test_kgent_rules_reports_a_bad_rule_by_file_and_keeps_the_others(ws: Path) -> None:
    (ws / ".kgent").mkdir()
    (ws / ".kgent" / "config.toml").write_text('[permissions]\ndeny = ["bash(rm *)", "bash(ls | wc)"]\n')
    out = kgent("rules", cwd=ws, state=ws.parent / "state")
    assert out.returncode == 1
    assert "bash(rm *)" in out.stdout
    assert f"error: {ws / '.kgent' / 'config.toml'}: [permissions] deny: 'bash(ls | wc)'" in out.stdout


def test_kgent_rules_changes_a_sessions_rules(ws: Path) -> None:
    state = ws.parent / "state"
    run = kgent("run", "--provider", "scripted", "--model", "hello", "--json", "hi", cwd=ws, state=state)
    session = json.loads(run.stdout.splitlines()[-1])["result"]["sessionId"]
    added = kgent("rules", "add", "--session", session, "edit(src/**)", cwd=ws, state=state)
    assert added.returncode == 0, added.stderr
    data = json.loads(kgent("rules", "--json", cwd=ws, state=state).stdout)
    assert data["rules"] == [
        {
            "rule": "edit(src/**)",
            "decision": "allow",
            "scope": "session",
            "sessionId": session,
            "text": "allow edits to `src/**` this session",
        }
    ]


def test_a_full_mode_command_finds_no_key_in_kgent_runs_environ(ws: Path) -> None:
    """Issue 36 point 4 for `kgent run`: the keys are wiped from its environ block at start and masked in every tool
    result, so `cat /proc/$PPID/environ` in full mode shows the block without them (the run's events, its session
    file and the second model request alike)."""
    from kgent.testing.model_server import ModelServer

    key, other = "sk-kg" + "Q7" * 20, "sk-ds" + "w3" * 20
    look = "cat /proc/$PPID/environ | tr '\\0' '\\n'; env"
    with ModelServer([[{"tool": "bash", "args": {"command": look}}], [{"text": "done"}]]) as server:
        out = kgent(
            "run", "--provider", "openai", "--model", "m", "--base-url", server.openai_base_url,
            "--mode", "full", "--json", "look",
            cwd=ws, state=ws.parent / "state", env={"KGENT_API_KEY": key, "DEEPSEEK_API_KEY": other},
        )  # fmt: skip
        bodies = [r.raw.decode() for r in server.requests]
    assert out.returncode == 0, out.stderr
    assert "KGENT_STATE_DIR=" in bodies[1]  # the command read the environ block, and the model got its output
    stored = "".join(p.read_text() for p in (ws.parent / "state").rglob("*.jsonl"))
    assert "KGENT_STATE_DIR=" in stored
    for text in (out.stdout, out.stderr, *bodies, stored):
        assert key[5:17] not in text and other[5:17] not in text


def test_kgent_run_writes_its_session_on_the_loop_and_a_shared_service_in_worker_threads() -> None:
    """One run in the process: the session's writes on the event loop's thread while the disk is fast
    (kgent.session.jsonl `on_loop`). The service that serves many sessions (daemon, HTTP, ACP) keeps handing them to
    worker threads, so a slow disk never holds its loop."""
    import argparse

    from kgent.cli.run import run_service
    from kgent.cli.terminal import TerminalPort
    from kgent.service.base import RunService
    from kgent.service.handshake import Settings

    flags = dict(provider=None, model=None, base_url=None, mode=None, max_turns=None, script=None)
    port = TerminalPort(None, interactive=False)
    assert run_service(argparse.Namespace(**flags), port).store.on_loop is True
    assert RunService(os.environ, Settings(), port).store.on_loop is False


def test_python_m_kgent_imports_nothing_from_the_workspace_it_starts_in(ws: Path, tmp_path: Path) -> None:
    """`python -m` puts the working directory first on sys.path; Kgent imports `tomllib` only once a rule file is
    there, so a project's own `tomllib.py` would run inside Kgent unasked (kgent.core.loading)."""
    ran = tmp_path / "the project's tomllib ran"
    (ws / "tomllib.py").write_text(f"open({str(ran)!r}, 'w').close()\nraise ImportError('not this one')\n")
    (ws / ".kgent").mkdir()
    (ws / ".kgent" / "config.toml").write_text('[permissions]\ndeny = ["bash(rm *)"]\n')
    done = kgent("rules", cwd=ws, state=tmp_path / "state")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bash(rm *)" in done.stdout  # the rule file was read, by the standard library's tomllib
    assert not ran.exists()
