"""No module opens a workspace path on its own: every read, write and listing Kgent does in a workspace goes through
the one files gate (kgent.files.gate).

How the test tells them apart: a Python audit hook (sys.addaudithook) sees every `open`, `os.listdir`, `os.scandir`,
`os.remove`, `os.rename`, `os.mkdir`, … of the process. For those whose path lies in the test's workspace it looks
for the gate's mark (kgent.files.audit: a context variable the gate sets around the I/O it does, which follows that
I/O into worker threads). An operation without the mark whose innermost Kgent frame is a module of the package is a
module opening a workspace path directly — a violation, named with its module and path. Git, ripgrep and bubblewrap
run as subprocesses and are not seen (the sandbox judges what they may reach); the test's own setup is not Kgent code.

The scenario touches every reader and writer: instructions (AGENTS.md, a nested CLAUDE.md), skills, prompt templates,
the project's rule file (read and written by an 'always in this project' answer), `.mcp.json` and the extensions'
config, the file tools (read, write, edit, ls, and grep/find on their fallback walkers), a shell glob, the change
tracking and review of the run, applyReview and rewind.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import collect
from kgent.core.events import PermissionRequest
from kgent.ext.host import Extensions
from kgent.ext.trust import set_trusted
from kgent.files import gate
from kgent.files.audit import is_gated
from kgent.files.gatedops import GatedFiles
from kgent.files.ops import LocalFileOps
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider
from kgent.sandbox.bwrap import detect
from kgent.service.commands import commands
from kgent.service.review import apply_review, current_starts, review_files
from kgent.service.rewind import apply_plan, plan_rewind
from kgent.session.jsonl import JsonlSessionStore
from kgent.tools import CODING_TOOLS
from kgent.tools.find import FindTool
from kgent.tools.grep import GrepTool

_EVENTS = frozenset(
    {
        "open",
        "os.listdir",
        "os.scandir",
        "os.remove",
        "os.rename",
        "os.mkdir",
        "os.rmdir",
        "os.chmod",
        "os.truncate",
        "os.link",
        "os.symlink",
        "shutil.rmtree",
    }
)
_watched: list[str] = []  # the workspace roots being watched (real and as given)
_seen: list[tuple[str, str, str]] = []  # (module, event, path) of each ungated operation in a workspace
_lock = threading.Lock()


def _kgent_module() -> str | None:
    """The innermost frame's module that belongs to the kgent package (None: no Kgent code on the stack)."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name == "kgent" or name.startswith("kgent."):
            return str(name)
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event not in _EVENTS or not _watched or is_gated():
        return
    for arg in args[:2]:
        if isinstance(arg, (str, bytes, os.PathLike)):
            path = os.path.abspath(os.fsdecode(arg))
            if any(path == w or path.startswith(w + os.sep) for w in _watched):
                module = _kgent_module()
                if module is not None:
                    with _lock:
                        _seen.append((module, event, path))
                return


sys.addaudithook(_hook)  # cannot be removed: it does nothing while no workspace is watched


@pytest.fixture
def watch() -> Iterator[list[tuple[str, str, str]]]:
    """Watch the workspaces added to the returned list's `roots` and collect the violations."""
    _seen.clear()
    yield _seen
    _watched.clear()
    _seen.clear()


def _watch(ws: Path) -> None:
    _watched.extend(dict.fromkeys([str(ws), os.path.realpath(ws)]))


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "pkg" / "deep").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("# project rules\nbe brief\n")
    (ws / "pkg" / "CLAUDE.md").write_text("# pkg rules\n")
    (ws / "pkg" / "deep" / "mod.py").write_text("value = 1\n")
    (ws / "notes.txt").write_text("hello\nworld\n")
    (ws / ".gitignore").write_text("*.log\n")
    skill = ws / ".kgent" / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: tidy the code\n---\nbody\n")
    (ws / ".kgent" / "prompts").mkdir()
    (ws / ".kgent" / "prompts" / "fix.md").write_text("---\ndescription: fix it\n---\nFix $ARGUMENTS\n")
    (ws / ".kgent" / "config.toml").write_text('[permissions]\ndeny = ["bash(rm *)"]\n')
    (ws / ".mcp.json").write_text('{"mcpServers": {}}\n')
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@e"
    for args in (["init", "-q", "."], ["add", "-A"], ["commit", "-qm", "first"]):
        subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)
    return ws


SCRIPT: list[list[dict[str, Any]]] = [
    [
        {"tool": "read", "args": {"path": "pkg/deep/mod.py"}},
        {"tool": "ls", "args": {"path": "pkg"}},
        {"tool": "grep", "args": {"pattern": "value", "path": "."}},
        {"tool": "find", "args": {"pattern": "*.py"}},
        {"tool": "read", "args": {"path": ".kgent/skills/tidy/SKILL.md"}},
    ],
    [{"tool": "write", "args": {"path": "made.txt", "content": "one\ntwo\n"}}],
    [{"tool": "edit", "args": {"path": "notes.txt", "oldText": "world", "newText": "there"}}],
    [{"tool": "bash", "args": {"command": "cat *.txt"}}],
    [{"tool": "bash", "args": {"command": "touch made.log"}}],
    [{"text": "done"}],
]


async def test_every_workspace_open_of_a_run_and_its_review_goes_through_the_gate(
    tmp_path: Path, watch: list[tuple[str, str, str]]
) -> None:
    ws = _workspace(tmp_path)
    set_trusted(ws, True)
    tools = [t for t in CODING_TOOLS() if t.name not in ("grep", "find")]
    tools += [GrepTool(force_fallback=True), FindTool(force_fallback=True)]  # the Python walkers, not rg
    store = JsonlSessionStore(tmp_path / "state")
    kernel = AgentKernel(
        ScriptedProvider(SCRIPT),
        tools=tools,
        store=store,
        config=KernelConfig(mode="auto"),
        sandbox=detect(),
    )

    def answer(request: PermissionRequest) -> str:  # the shell calls: remembered in the project's rule file
        ids = [o.option_id for o in request.options]
        return "allow_always_project" if "allow_always_project" in ids else "allow_once"

    _watch(ws)
    run = kernel.create_run("work", workspace=ws)
    events = await collect(run, answer)
    result = await run.result()
    assert result.status == "settled", result.error
    assert any(e.type == "instructions" for e in events)
    assert "bash(touch *)" in (ws / ".kgent" / "config.toml").read_text()  # the rule file was written
    # the person's side: commands, extensions' config, review and rewind of that run
    assert [c.name for c in commands(ws) if c.source == "project"] == ["fix"]
    ext = Extensions()
    assert ext.listing(ws)["project"]["trusted"] is True
    await ext.aclose()
    tree = await store.load(result.session_id)
    files = review_files(tree)
    assert {f.path for f in files} >= {"made.txt", "notes.txt"}
    fs = LocalFileOps()
    await current_starts(fs, ws, files)
    hunk = next(h.id for f in files if f.path == "notes.txt" for h in f.hunks)
    outcomes, _ = await apply_review(tree, fs, [], [hunk])
    assert outcomes[0].outcome == "rejected"
    prompt = next(e for e in tree.entries.values() if e.type == "message")
    plan = await plan_rewind(tree, prompt.id, fs, git=False)
    await apply_plan(plan, fs, ws)
    assert not (ws / "made.txt").exists()
    await kernel.aclose()
    assert watch == [], "modules that opened workspace paths themselves:\n" + "\n".join(
        f"  {m}: {e} {p}" for m, e, p in dict.fromkeys(watch)
    )


async def test_the_audit_tells_a_direct_open_from_one_through_the_gate(
    tmp_path: Path, watch: list[tuple[str, str, str]]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("x\n")
    _watch(ws)
    assert gate.read_file(ws, "a.txt")[0] == b"x\n"  # the gate's read: marked
    await GatedFiles(LocalFileOps(), ws).read_bytes(ws / "a.txt")  # the tools' FileOps: marked
    assert watch == []
    await LocalFileOps().read_bytes(ws / "a.txt")  # the raw I/O seam used on its own: a direct open
    assert [(m, e) for m, e, _ in watch] == [("kgent.files.ops", "open")]
