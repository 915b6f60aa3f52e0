"""`make demo-http`: `kgent serve --http` on the scripted provider in a fresh demo workspace; prints the URL with its
token. Pick a script in the Model menu (tool-loop edits sample.py with an approval) and type any prompt."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from kgent.http.guard import make_config
from kgent.http.serve import serve

SAMPLE = "value = 1\nprint(value)\n"


def main() -> int:
    workspace = Path(tempfile.mkdtemp(prefix="kgent-http-demo-"))
    state = Path(tempfile.mkdtemp(prefix="kgent-http-demo-state-"))
    (workspace / "sample.py").write_text(SAMPLE)
    (workspace / "notes.txt").write_text("hello\n")
    os.environ.update(KGENT_STATE_DIR=str(state), KGENT_PROVIDER="scripted", KGENT_PERMISSION_MODE="ask")
    os.environ.setdefault("KGENT_MODEL", "tool-loop")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    try:
        config = make_config(
            env,
            host="127.0.0.1",
            port=int(env.get("KGENT_HTTP_PORT", "8000")),
            workspace_roots=[str(workspace)],
            cors_origins=[],
            insecure=False,
        )
        print("kgent http demo: scripted provider (no key, no network); Ctrl-C stops it")
        print("  try: Model 'scripted · tool-loop', prompt 'change value to 2', then approve the edit")
        return serve(config, env)
    except ValueError as exc:
        print(f"kgent: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
