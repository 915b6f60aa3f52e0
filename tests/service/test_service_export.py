"""`kgent sessions export`: the active branch as Markdown, HTML and JSON — prompts, answers, tool calls with results
and diffs, approvals and the cost; secrets redacted everywhere; attached images inline (data: URIs) in the HTML."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

from kgent.core.redact import MASK
from kgent.service.export import export_session
from kgent.session.entries import new_entry
from kgent.session.memory import InMemorySessionStore

SECRET = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"  # key-shaped
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)
DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-value = 1\n+value = 2\n"


async def _session(store: InMemorySessionStore, workspace: Path) -> str:
    info = await store.create(workspace=str(workspace))
    sha = await store.put_blob(info.id, PNG)
    image = {"mimeType": "image/png", "sha256": sha, "size": len(PNG)}
    call = {"id": "call_1", "name": "edit", "arguments": {"path": "app.py", "oldText": "1", "newText": "2"}}
    usage = {"inputTokens": 1000, "outputTokens": 50, "cacheReadTokens": 0, "cacheWriteTokens": 0}
    entries = [
        new_entry(
            "message",
            None,
            message={"role": "user", "text": f"use key {SECRET} <b>now</b>", "images": [image]},
        ),
    ]
    entries.append(
        new_entry(
            "message",
            entries[-1].id,
            message={
                "role": "assistant",
                "text": "Editing.",
                "toolCalls": [call],
                "usage": usage,
                "model": "deepseek-chat",
            },
        )
    )
    entries.append(
        new_entry(
            "permission",
            entries[-1].id,
            tool="edit",
            approved=True,
            source="host",
            reason="the user approved",
        )
    )
    entries.append(
        new_entry(
            "message",
            entries[-1].id,
            message={
                "role": "tool",
                "toolCallId": "call_1",
                "name": "edit",
                "content": "Edited.",
                "details": {"diff": DIFF},
            },
        )
    )
    entries.append(
        new_entry("message", entries[-1].id, message={"role": "assistant", "text": "Done: value is 2."})
    )
    await store.append(info.id, entries)
    return info.id


async def test_markdown_has_the_conversation_the_tool_call_the_diff_and_the_cost(tmp_path: Path) -> None:
    store = InMemorySessionStore()
    sid = await _session(store, tmp_path)
    md = await export_session(store, sid, "md")
    assert SECRET not in md and MASK in md
    assert "## You" in md and "## Tool call `edit`" in md and '"path": "app.py"' in md
    assert "```diff\n" + DIFF.rstrip("\n") + "\n```" in md
    assert "## edit: approved (host)" in md and "Done: value is 2." in md
    assert "1000 in / 50 out tokens · ≈ $" in md  # deepseek-chat has a price
    assert "(image: image/png, " in md


async def test_html_escapes_everything_and_inlines_the_image(tmp_path: Path) -> None:
    store = InMemorySessionStore()
    sid = await _session(store, tmp_path)
    page = await export_session(store, sid, "html")
    assert SECRET not in page
    assert "&lt;b&gt;now&lt;/b&gt;" in page and "<b>now</b>" not in page
    assert f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"' in page
    assert "<script" not in page and "default-src 'none'" in page
    assert '<span class="add">+value = 2</span>' in page


async def test_json_is_the_redacted_branch(tmp_path: Path) -> None:
    store = InMemorySessionStore()
    sid = await _session(store, tmp_path)
    doc = json.loads(await export_session(store, sid, "json"))
    assert doc["session"]["sessionId"] == sid
    assert [e["type"] for e in doc["entries"]] == ["message", "message", "permission", "message", "message"]
    assert SECRET not in json.dumps(doc)


def test_kgent_sessions_export_writes_the_transcript(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and "API_KEY" not in k}
    env.update(KGENT_STATE_DIR=str(state), KGENT_CONFIG_DIR=str(tmp_path / "config"))

    def kgent(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kgent", *args],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    first = kgent("run", "--provider", "scripted", "--model", "hello", "--json", "hi")
    sid = json.loads(first.stdout.splitlines()[-1])["result"]["sessionId"]
    md = kgent("sessions", "export", sid)
    assert md.returncode == 0, md.stderr
    assert md.stdout.startswith("# ") and "## You\n\nhi" in md.stdout
    out = tmp_path / "t.html"
    done = kgent("sessions", "export", sid, "--format", "html", "-o", str(out))
    assert done.returncode == 0 and out.read_text().startswith("<!doctype html>")
    missing = kgent("sessions", "export", "nope00000000")
    assert missing.returncode == 2 and "error:" in missing.stderr
