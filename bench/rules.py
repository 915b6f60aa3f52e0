"""Approval fatigue: how many approvals a second session of the same ordinary work still asks once the first one's
*always* answers have become rules.

A 20-call session of ordinary work (run the tests, grep, edit, make, git) goes through the stdio daemon (a real
subprocess, the scripted provider playing the calls, mode `ask`, the project trusted as a user does with
`kgent extensions --trust`), with a host that always picks the broadest *always* option offered
(`allow_always_project`, else `allow_always`, else `allow_once` when the card says `noRule`). The workspace's files
are then put back as they were, and a second session plays the same 20 calls. Reported: the approvals each session
asked (and which), the rules the first one created (agent/rules), and the second session's repeats (a call asked in
both).

    .venv/bin/python bench/rules.py [--untrusted]

Writes bench/results/rules.json (rules-untrusted.json with --untrusted: the project not trusted, so the project
answers go to the user's own file for it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from kgent.testing.daemon_client import DaemonClient

RESULTS = Path(__file__).parent / "results"

FILES = {
    "src/app.py": "def add(a, b):\n    return a + b\n\n\n# TODO: subtract\n",
    "tests/__init__.py": "",
    "tests/test_app.py": (
        "import unittest\n\nfrom src.app import add\n\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n"
    ),
    "src/__init__.py": "",
    "Makefile": "test:\n\tpython3 -m unittest -q\n\nlint:\n\tpython3 -m py_compile src/app.py\n",
}

# The 20 calls of a small piece of ordinary work: look, run the tests, change code, run them again, commit.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read", {"path": "src/app.py"}),
    ("bash", {"command": "grep -rn 'def ' src"}),
    ("bash", {"command": "python3 -m unittest -q"}),
    (
        "edit",
        {
            "path": "src/app.py",
            "oldText": "# TODO: subtract\n",
            "newText": "def sub(a, b):\n    return a - b\n",
        },
    ),
    ("bash", {"command": "python3 -m unittest -q"}),
    ("bash", {"command": "grep -n TODO src/app.py || python3 -m unittest -q"}),
    ("edit", {"path": "src/app.py", "oldText": "    return a - b\n", "newText": "    return a - b  # new\n"}),
    ("write", {"path": "tests/test_sub.py", "content": "import unittest\n"}),
    ("bash", {"command": "git status --short"}),
    ("bash", {"command": "git diff --stat"}),
    ("bash", {"command": "ls src | wc -l"}),
    ("bash", {"command": "make test"}),
    ("bash", {"command": "make test 2>&1 | tail -3"}),
    ("edit", {"path": "tests/test_app.py", "oldText": "add(1, 2), 3", "newText": "add(2, 2), 4"}),
    ("bash", {"command": "python3 -m unittest tests.test_app -q"}),
    ("bash", {"command": "git add -A && git commit -qm 'sub'"}),
    ("bash", {"command": "mkdir -p build && touch build/stamp"}),
    ("edit", {"path": "src/app.py", "oldText": "  # new\n", "newText": "\n"}),
    ("bash", {"command": "sed -n 1,5p src/app.py"}),
    ("bash", {"command": "make lint"}),
]
assert len(CALLS) == 20

BROADEST = ("allow_always_project", "allow_always", "allow_once")


def script(path: Path) -> str:
    turns = [[{"tool": tool, "args": args, "id": f"call_{i}"}] for i, (tool, args) in enumerate(CALLS)]
    turns.append([{"text": "Done."}])
    path.write_text(json.dumps({"description": "20 calls of ordinary work", "turns": turns}))
    return str(path)


def lay_out(workspace: Path) -> None:
    for name in ("src", "tests", "build"):
        shutil.rmtree(workspace / name, ignore_errors=True)
    for name, text in FILES.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)


def _git(workspace: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True)


async def session(
    client: DaemonClient, workspace: Path, model: str, asked: list[dict[str, Any]]
) -> dict[str, Any]:
    ended: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    def on_event(method: str, params: Any) -> None:
        if method == "agent/event" and params["event"]["type"] == "run_end" and not ended.done():
            ended.set_result(params["event"])

    client.on_notification = on_event
    await client.request(
        "agent/run", {"prompt": "work", "workspace": str(workspace), "model": model, "mode": "ask"}
    )
    return await asyncio.wait_for(ended, 300)


async def measure(root: Path, *, trusted: bool = True) -> dict[str, Any]:
    workspace = (root / "ws").resolve()
    workspace.mkdir(parents=True)
    lay_out(workspace)
    _git(workspace, "init", "-q")
    _git(workspace, "-c", "user.email=k@example.com", "-c", "user.name=k", "add", "-A")
    _git(workspace, "-c", "user.email=k@example.com", "-c", "user.name=k", "commit", "-qm", "start")
    model = script(root / "work.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and not k.endswith("_API_KEY")}
    env.update(
        KGENT_STATE_DIR=str(root / "state"),
        KGENT_CONFIG_DIR=str(root / "config"),
        KGENT_PROVIDER="scripted",
        GIT_AUTHOR_NAME="k",
        GIT_AUTHOR_EMAIL="k@example.com",
        GIT_COMMITTER_NAME="k",
        GIT_COMMITTER_EMAIL="k@example.com",
    )
    client = await DaemonClient.spawn(env=env)
    asked: list[dict[str, Any]] = []

    async def answer(params: Any) -> dict[str, Any]:
        asked.append(params)
        offered = [o["optionId"] for o in params["options"]]
        return {"outcome": "selected", "optionId": next(o for o in BROADEST if o in offered)}

    client.on_request["agent/permission"] = answer
    try:
        await client.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientInfo": {"name": "bench-rules"},
                "settings": {"trustProjectExtensions": trusted},
            },
        )
        first_end = await session(client, workspace, model, asked)
        first = list(asked)
        rules = await client.request("agent/rules", {"workspace": str(workspace)})
        asked.clear()
        lay_out(workspace)  # the same files again: the same 20 calls mean the same work
        second_end = await session(client, workspace, model, asked)
        second = list(asked)
    finally:
        await client.close()

    def shown(params: dict[str, Any]) -> str:
        call = params["toolCall"]
        return call.get("command") or f"{call['name']} {call.get('path', '')}".strip()

    first_calls = [shown(p) for p in first]
    return {
        "calls_per_session": len(CALLS),
        "project_trusted": trusted,
        "first_session": {
            "status": first_end["status"],
            "approvals": len(first),
            "asked": first_calls,
            "answers": [
                next(o for o in BROADEST if o in [x["optionId"] for x in p["options"]]) for p in first
            ],
            "no_rule": [p.get("noRule") for p in first if p.get("noRule")],
        },
        "rules_created": [
            {"rule": r["rule"], "scope": r["scope"], "text": r["text"], "file": r.get("file")}
            for r in rules["rules"]
            if r["decision"] == "allow"
        ],
        "second_session": {
            "status": second_end["status"],
            "approvals": len(second),
            "asked": [shown(p) for p in second],
            "repeats": [shown(p) for p in second if shown(p) in first_calls],
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--untrusted",
        action="store_true",
        help="the project not trusted (its rules kept in the user's own file)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(measure(Path(tmp), trusted=not args.untrusted))
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / ("rules-untrusted.json" if args.untrusted else "rules.json")
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
