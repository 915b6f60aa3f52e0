"""`kgent acp` on whatever its stdin and stdout are: regular files (a recorded exchange replayed, the answers kept in a
file) as well as pipes, and a reader that leaves early (`kgent acp | head`): answered, exit 0, no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from acp import schema as S
from kgent_host import STATE_DIR, daemon_env

AGENT = [sys.executable, "-m", "kgent", "acp"]


def _line(msg_id: int, method: str, params: dict[str, object]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode() + b"\n"


def test_stdin_and_stdout_may_be_regular_files(tmp_path: Path) -> None:
    recorded = tmp_path / "in.jsonl"
    recorded.write_bytes(
        _line(0, "initialize", {"protocolVersion": 1})
        + _line(1, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
    )
    out, err = tmp_path / "out.jsonl", tmp_path / "err.txt"
    with recorded.open("rb") as stdin, out.open("wb") as stdout, err.open("wb") as stderr:
        code = subprocess.run(
            AGENT, stdin=stdin, stdout=stdout, stderr=stderr, env=daemon_env(STATE_DIR), timeout=60
        ).returncode
    assert code == 0, err.read_text()
    replies = {m["id"]: m for m in map(json.loads, out.read_text().splitlines())}
    assert S.InitializeResponse.model_validate(replies[0]["result"]).protocol_version == 1
    assert S.NewSessionResponse.model_validate(replies[1]["result"]).session_id
    assert "Traceback" not in err.read_text()


def test_a_reader_that_leaves_early_ends_it_quietly() -> None:
    proc = subprocess.Popen(
        AGENT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=daemon_env(STATE_DIR),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(_line(0, "initialize", {"protocolVersion": 1}))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0
    proc.stdout.close()  # as `| head -1` does
    proc.stdin.write(_line(1, "initialize", {"protocolVersion": 1}))  # its answer meets a closed pipe
    proc.stdin.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(60) == 0, stderr
    assert "Traceback" not in stderr, stderr
