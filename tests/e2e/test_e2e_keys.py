"""Keys out of reach (issue 36 point 4): a daemon started with API keys in its environment, in full mode (no sandbox,
nothing asked), runs the commands a prompt-injected model would use to find them — its parent's environ block,
`env`, every process's environ it can read. No key (nor a long run of one) may reach the tool result, the events,
the session files or the next model request; the daemon's own /proc/PID/environ holds none either.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

from kgent_host import KgentHost

from kgent.testing.model_server import ModelServer

# What a hostile model runs: a file the key was pasted into, the daemon's environ block (its shell's parent), the shell's environment, and every
# environ on the machine this user can read.
LOOK = (
    "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'; echo ---; env; echo ---;"
    " cat /proc/$PPID/environ | tr '\\0' '\\n'; echo; cat notes.txt"
)  # the daemon's block and the file last: a busy machine's many environs may push the head out of the result


def _environ_of(pid: int) -> bytes:
    return Path(f"/proc/{pid}/environ").read_bytes()


def _stored(state: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in state.rglob("*") if p.is_file())


def _key(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(30)


async def test_full_mode_commands_find_no_key(spawn: Any, workspace: Path, tmp_path: Path) -> None:
    kgent_key, deepseek_key = _key("sk-kg"), _key("sk-ds")
    state = tmp_path / "state"
    # a key pasted into a file by someone: masked all the same when a command prints it
    (workspace / "notes.txt").write_text(f"the key: {kgent_key}\n")
    with ModelServer([[{"tool": "bash", "args": {"command": LOOK}}], [{"text": "done"}]]) as server:
        h: KgentHost = await spawn(
            state_dir=str(state),
            KGENT_PROVIDER="openai",
            KGENT_BASE_URL=server.openai_base_url,
            KGENT_MODEL="test-model",
            KGENT_API_KEY=kgent_key,
            DEEPSEEK_API_KEY=deepseek_key,
        )
        environ = _environ_of(h.pid)
        assert b"KGENT_PROVIDER=openai" in environ  # the block is there; the keys are not
        assert kgent_key.encode() not in environ and deepseek_key.encode() not in environ
        _, end, events = await h.run_to_end(prompt="look around", workspace=str(workspace), mode="full")
        assert end["status"] == "settled", end
        result = next(e for e in events if e["type"] == "tool_update" and e["status"] == "completed")
        assert "KGENT_PROVIDER=openai" in result["output"]  # the command did read the daemon's environ block
        assert "the key: [redacted]" in result["output"]
        # the model was reached with the key in its header, as configured (the key works; it is only kept out of
        # everything else)
        assert server.requests[0].headers.get("authorization") == f"Bearer {kgent_key}"
        bodies = [r.raw.decode() for r in server.requests]
        assert len(bodies) == 2 and "KGENT_PROVIDER=openai" in bodies[1]
    seen = {
        "events": json.dumps(events),
        "model requests": "\n".join(bodies),
        "session files": _stored(state),
    }
    for where, text in seen.items():
        for key in (kgent_key, deepseek_key):
            for i in range(0, len(key) - 12):  # no run of 12 characters of a key (kgent.core.redact.FRAGMENT)
                assert key[i : i + 12] not in text, f"a run of a key in the {where}"
