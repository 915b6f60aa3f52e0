"""`kgent demo rewind`: restore a checkpoint. In a temporary git repository a scripted run edits two files, creates a
third and changes a fourth with `sed -i`; the demo then edits one of the edited files as the person would, and
rewinds to the prompt (kgent.service.rewind): the plan first, then the files restored, the conflict left alone."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path
from typing import Any

PROMPT = "Rename beta and charlie, add new.txt, and fix c.txt with sed."
FILES = {
    "a.txt": "alpha\nbeta\ngamma\n",
    "b.txt": "alpha\nbravo\ncharlie\n",
    "c.txt": "charlie\ndelta\necho\n",
}


async def rewind_demo(workspace: Path, renderer: Any) -> int:
    """Play the scenario in `workspace` (an empty directory); 0 when every step came out as it should."""
    from kgent.cli.demo import drive
    from kgent.cli.rewind import describe
    from kgent.files.ops import LocalFileOps
    from kgent.kernel import AgentKernel, KernelConfig
    from kgent.providers.scripted import ScriptedProvider
    from kgent.service.rewind import rewind_session

    git = shutil.which("git")
    if git is None:
        renderer.note(
            {"demo": "this scenario needs git on PATH (shell commands are tracked in a git work tree)"}
        )
        return 1
    for name, text in FILES.items():
        (workspace / name).write_text(text, encoding="utf-8")
    await asyncio.to_thread(subprocess.run, [git, "init", "-q"], cwd=workspace, check=True)
    renderer.note({"demo": f"a git work tree with {', '.join(FILES)}"})
    kernel = AgentKernel(ScriptedProvider("rewind-edits"), config=KernelConfig(mode="full"))
    run = kernel.create_run(PROMPT, workspace=workspace)
    result = await drive(run, renderer, lambda request: "allow_once")
    try:
        edited = (workspace / "b.txt").read_text(encoding="utf-8") + "a line the person added\n"
        (workspace / "b.txt").write_text(edited, encoding="utf-8")
        renderer.note(
            {"demo": "the person edits b.txt after the run (so restoring it would lose their line)"}
        )
        tree = await kernel.store.load(result.session_id)
        checkpoint = next(
            e.id for e in tree.branch() if e.type == "message" and e.data["message"]["role"] == "user"
        )
        fs = LocalFileOps()
        plan, files = await rewind_session(kernel.store, tree, checkpoint, fs, dry_run=True)
        renderer.note({"demo": "dry run — what restoring the checkpoint would do:"})
        for line in describe(plan, files, done=False):
            renderer.note({"demo": line})
        plan, files = await rewind_session(kernel.store, tree, checkpoint, fs, dry_run=False)
        for line in describe(plan, files, done=True):
            renderer.note({"demo": line})
        after = await kernel.store.load(result.session_id)
    finally:
        await kernel.aclose()
    restored = all((workspace / n).read_text(encoding="utf-8") == FILES[n] for n in ("a.txt", "c.txt"))
    kept = (workspace / "b.txt").read_text(encoding="utf-8") == edited
    ok = restored and kept and not (workspace / "new.txt").exists() and after.leaf_id == plan.leaf_id
    renderer.note(
        {
            "demo": "a.txt and c.txt (the sed) are back, new.txt is gone, b.txt kept the person's line, and the "
            "next prompt continues from before the checkpoint"
            if ok
            else "the rewind did not come out as it should"
        }
    )
    return 0 if ok else 1
