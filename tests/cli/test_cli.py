"""The `kgent` command as a user meets it: subprocesses, real files, the scripted provider (no key, no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def kgent(*args: str, cwd: Path, state: Path, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and "API_KEY" not in k}
    full_env.update({"KGENT_STATE_DIR": str(state), "COLUMNS": "200"}, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "kgent", *args], cwd=cwd, input=stdin, capture_output=True, text=True,
        env=full_env, timeout=120,
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "sample.py").write_text("value = 1\nprint(value)\n")
    return tmp_path / "ws"


def test_demo_shows_read_edit_approval_bash_answer_and_patch(tmp_path: Path) -> None:
    out = kgent("demo", cwd=tmp_path, state=tmp_path / "state")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    order = ["▶ Read sample.py", "▶ Edit sample.py", "approval needed", "✓ Edit sample.py", "▶ Run `grep",
             "Updated sample.py", "diff --git a/sample.py"]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "settled" in text


def test_run_json_streams_events_and_ends_with_the_result(ws: Path) -> None:
    out = kgent("run", "--provider", "scripted", "--model", "tool-loop", "--mode", "full", "--json", "set value",
                cwd=ws, state=ws.parent / "state")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    types = [line.get("type") for line in lines]
    assert types[0] == "run_start" and types.count("run_end") == 1
    end = next(line for line in lines if line.get("type") == "run_end")
    assert end["status"] == "settled" and end["changedPaths"] == ["sample.py"] and "+value = 2" in end["patch"]
    assert lines[-1]["result"]["status"] == "settled"
    assert (ws / "sample.py").read_text().startswith("value = 2")


def test_without_a_terminal_approvals_are_rejected(ws: Path) -> None:
    out = kgent("run", "--provider", "scripted", "--model", "tool-loop", "--mode", "ask", "--json", "set value",
                cwd=ws, state=ws.parent / "state")
    assert out.returncode == 0  # the run settles; the model was told permission_denied
    resolved = [json.loads(x) for x in out.stdout.splitlines() if '"permission_resolved"' in x]
    assert [r["approved"] for r in resolved] == [False, False]
    assert (ws / "sample.py").read_text().startswith("value = 1")


def test_failed_run_exits_nonzero(ws: Path) -> None:
    out = kgent("run", "--provider", "scripted", "--model", "provider-error", "x", cwd=ws, state=ws.parent / "state")
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
    second = kgent("run", "--provider", "scripted", "--model", "hello", "--json", "--session", sid, "second",
                   cwd=ws, state=state)
    assert second.returncode == 0
    listing = kgent("sessions", "show", sid, cwd=ws, state=state).stdout
    assert "user: first" in listing and "user: second" in listing


def test_debug_repl_runs_lines_in_one_session(ws: Path) -> None:
    out = kgent("debug", "--provider", "scripted", "--model", "hello", cwd=ws, state=ws.parent / "state",
                stdin="one\ntwo\n/history\nexit\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("=== FINAL ANSWER ===") == 2
    assert "user: one" in out.stdout and "user: two" in out.stdout


def test_help_lists_every_subcommand(tmp_path: Path) -> None:
    out = kgent("--help", cwd=tmp_path, state=tmp_path)
    for name in ("run", "demo", "debug", "serve", "sessions"):
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
    term = Terminal("run", "--provider", "scripted", "--model", "tool-loop", "set value", cwd=ws,
                    state=ws.parent / "state")
    for _ in range(2):  # the edit, then the bash command
        term.read_until(b"allow? [y]es once")
        term.out = b""
        term.type(b"y\n")
    assert term.exit_code() == 0
    assert (ws / "sample.py").read_text().startswith("value = 2")


def test_ctrl_c_at_an_approval_prompt_cancels_the_run_at_once(ws: Path) -> None:
    term = Terminal("run", "--provider", "scripted", "--model", "tool-loop", "set value", cwd=ws,
                    state=ws.parent / "state")
    term.read_until(b"allow? [y]es once")
    term.type(b"\x03")  # the terminal turns it into SIGINT; nobody presses Enter afterwards
    assert term.exit_code(seconds=10) == 1
    assert b"cancelled" in term.out
    assert (ws / "sample.py").read_text().startswith("value = 1")


def test_markup_like_text_in_commands_and_answers_is_printed_as_is(ws: Path) -> None:
    script = ws.parent / "brackets.json"
    command = "echo '[/x] [bold]not bold'\necho second line"
    script.write_text(json.dumps([[{"tool": "bash", "args": {"command": command}}], [{"text": "done [/y] :x:"}]]))
    out = kgent("run", "--provider", "scripted", "--script", str(script), "--mode", "ask", "go",
                cwd=ws, state=ws.parent / "state")
    assert out.returncode == 0, out.stderr
    assert "echo '[/x] [bold]not bold'\necho second line" in out.stdout  # the whole command, for the approval
    assert "done [/y] :x:" in out.stdout


def test_provider_model_and_mode_come_from_the_environment(ws: Path) -> None:
    env = {"KGENT_PROVIDER": "scripted", "KGENT_MODEL": "tool-loop", "KGENT_PERMISSION_MODE": "risk_based"}
    out = kgent("run", "--json", "set value", cwd=ws, state=ws.parent / "state", env=env)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    start = lines[0]
    assert (start["provider"], start["model"], start["mode"]) == ("scripted", "tool-loop", "auto")
    asked = [line["toolCall"]["name"] for line in lines if line.get("type") == "permission_request"]
    assert asked == ["bash"]  # auto: the workspace edit is allowed, the shell command is asked (and, off a TTY, denied)
    assert (ws / "sample.py").read_text().startswith("value = 2")


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
    ok = kgent("debug", "--provider", "scripted", "--model", "hello", "--once", "hi", cwd=ws, state=ws.parent / "s")
    bad = kgent("debug", "--provider", "scripted", "--model", "provider-error", "--once", "hi", cwd=ws,
                state=ws.parent / "s")
    assert (ok.returncode, bad.returncode) == (0, 1)
