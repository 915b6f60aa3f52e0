"""`kgent run --image PATH`: the image goes with the prompt (kept once in the session's blobs, named in the user
message entry); a file that is not an image, a missing one, too many, or a model without vision: a clear error, exit
2, no run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from test_cli import kgent

from kgent.testing.images import png

SCRIPTED = ("--provider", "scripted", "--model", "hello", "--json")


def test_an_image_goes_with_the_prompt(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    (ws / "shot.png").write_bytes(png(4, 3))
    out = kgent("run", *SCRIPTED, "--image", "shot.png", "what is in it?", cwd=ws, state=state)
    assert out.returncode == 0, out.stdout + out.stderr
    sid = json.loads(out.stdout.splitlines()[-1])["result"]["sessionId"]
    stored = json.loads(kgent("sessions", "show", sid, "--json", cwd=ws, state=state).stdout)
    user = next(e for e in stored["entries"] if e["type"] == "message" and e["message"]["role"] == "user")
    digest = hashlib.sha256(png(4, 3)).hexdigest()
    assert [(i["mimeType"], i["sha256"], i["name"]) for i in user["message"]["images"]] == [
        ("image/png", digest, "shot.png")
    ]
    assert [p.name for p in state.rglob("*.blobs/*")] == [digest]


def test_what_is_no_image_is_refused_before_a_run(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    (ws / "notes.png").write_text("not a picture\n")
    (ws / "shot.png").write_bytes(png(2, 2))
    cases = [
        (("--image", "notes.png"), "--image notes.png is not a PNG, JPEG, WebP or GIF image"),
        (("--image", "gone.png"), "--image gone.png: No such file or directory"),
        (("--image", "shot.png") * 9, "9 images: at most 8 per prompt"),
    ]
    for flags, said in cases:
        out = kgent("run", *SCRIPTED, *flags, "look", cwd=ws, state=state)
        assert out.returncode == 2 and said in out.stdout, out.stdout + out.stderr
        assert "run_start" not in out.stdout
    blind = kgent(
        "run",
        "--provider",
        "openai",
        "--model",
        "deepseek-chat",
        "--json",
        "--image",
        "shot.png",
        "look",
        cwd=ws,
        state=state,
        env={"KGENT_API_KEY": "sk-test-not-used", "KGENT_BASE_URL": "http://127.0.0.1:9/v1"},
    )
    assert (
        blind.returncode == 2 and "'deepseek-chat'" in blind.stdout and "does not take images" in blind.stdout
    )
    assert "run_start" not in blind.stdout and not list(state.rglob("*.jsonl"))
