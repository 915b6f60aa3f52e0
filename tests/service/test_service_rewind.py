"""kgent.service.rewind over real files and hand-built sessions: each file walked back run by run, rejected hunks
skipped, the user's change anywhere in a file a conflict (by the before-text's hash), created files deleted, deleted
ones recreated, a path outside the workspace never touched, and outside git the shell commands named."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kgent.changes.hunks import compute_hunks
from kgent.files.ops import LocalFileOps
from kgent.kernel.review import text_sha
from kgent.service.rewind import RewindError, apply_plan, plan_rewind
from kgent.session.entries import SessionEntry, SessionInfo, SessionTree, new_entry

V0 = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n"
V1 = V0.replace("two", "TWO")
V2 = V1.replace("seven", "SEVEN")


def _file(run: str, rel: str, before: str | None, after: str | None, sha: bool = True) -> dict[str, Any]:
    hunks = [{**h.to_dict(), "id": f"{run}.{rel}.{n}"} for n, h in enumerate(compute_hunks(before, after))]
    out: dict[str, Any] = {"path": rel, "created": before is None, "deleted": after is None, "hunks": hunks}
    if sha and before is not None:
        out["beforeSha"] = text_sha(before)
    return out


class Session:
    """A session tree built entry by entry on one branch."""

    def __init__(self, workspace: Path) -> None:
        self.tree = SessionTree(
            info=SessionInfo(id="s1", workspace=str(workspace), created="2026-01-01T00:00:00Z")
        )
        self.add("config", mode="full", provider="scripted", model="x")

    def add(self, type: str, **data: Any) -> SessionEntry:
        entry = new_entry(type, self.tree.leaf_id, **data)
        self.tree.add([entry])
        return entry

    def prompt(self, text: str) -> SessionEntry:
        return self.add("message", message={"role": "user", "text": text})

    def run(self, run_id: str, *files: dict[str, Any], commands: tuple[str, ...] = ()) -> None:
        calls = [{"id": f"c{n}", "name": "bash", "arguments": {"command": c}} for n, c in enumerate(commands)]
        self.add(
            "message", message={"role": "assistant", "text": "ok", "stopReason": "end", "toolCalls": calls}
        )
        self.add("review", runId=run_id, files=list(files))


async def _plan(s: Session, entry: SessionEntry, git: bool = True) -> dict[str, tuple[str, str | None]]:
    plan = await plan_rewind(s.tree, entry.id, LocalFileOps(), git=git)
    return {f.path: (f.outcome, f.reason) for f in plan.files}


async def _rewind(s: Session, entry: SessionEntry, workspace: Path) -> dict[str, str]:
    plan = await plan_rewind(s.tree, entry.id, LocalFileOps(), git=True)
    return {f.path: f.outcome for f in await apply_plan(plan, LocalFileOps(), workspace)}


async def test_two_runs_walk_back_to_the_first_checkpoint_and_the_second_only_undoes_its_own(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text(V2)
    s = Session(tmp_path)
    first = s.prompt("one")
    s.run("r1", _file("r1", "a.txt", V0, V1))
    second = s.prompt("two")
    s.run("r2", _file("r2", "a.txt", V1, V2))
    assert await _rewind(s, second, tmp_path) == {"a.txt": "restored"}
    assert (tmp_path / "a.txt").read_text() == V1
    (tmp_path / "a.txt").write_text(V2)
    assert await _rewind(s, first, tmp_path) == {"a.txt": "restored"}
    assert (tmp_path / "a.txt").read_text() == V0


async def test_the_users_edit_far_from_the_agents_lines_is_still_a_conflict(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(V1 + "the user's line\n")  # the hunk itself still reverts cleanly
    s = Session(tmp_path)
    first = s.prompt("one")
    s.run("r1", _file("r1", "a.txt", V0, V1))
    outcome, reason = (await _plan(s, first))["a.txt"]
    # In a person's words: which prompt's change it was, never the run id; the fronts say "left as it is" themselves.
    assert (outcome, reason) == ("conflict", "changed since the agent wrote it for “one”")
    assert await _rewind(s, first, tmp_path) == {"a.txt": "conflict"}
    assert (tmp_path / "a.txt").read_text() == V1 + "the user's line\n"


async def test_a_session_without_before_hashes_is_checked_hunk_by_hunk(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(V1 + "the user's line\n")
    s = Session(tmp_path)
    first = s.prompt("one")
    s.run("r1", _file("r1", "a.txt", V0, V1, sha=False))
    assert await _rewind(s, first, tmp_path) == {"a.txt": "restored"}
    assert (tmp_path / "a.txt").read_text() == V0 + "the user's line\n"


async def test_created_files_are_deleted_deleted_ones_recreated_rejected_hunks_skipped(
    tmp_path: Path,
) -> None:
    (tmp_path / "new.txt").write_text("made\n")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "a.txt").write_text(V1.replace("TWO", "two"))  # its one hunk was rejected in a review
    s = Session(tmp_path)
    first = s.prompt("one")
    s.run(
        "r1",
        _file("r1", "new.txt", None, "made\n"),
        _file("r1", "empty.txt", None, ""),
        _file("r1", "gone.txt", "old\n", None),
        _file("r1", "a.txt", V0, V1),
    )
    hunk = s.tree.branch()[-1].data["files"][3]["hunks"][0]["id"]
    s.add("review_decision", decisions=[{"hunkId": hunk, "status": "rejected"}], note=None)
    assert await _rewind(s, first, tmp_path) == {
        "a.txt": "unchanged",
        "empty.txt": "restored",
        "gone.txt": "restored",
        "new.txt": "restored",
    }
    assert not (tmp_path / "new.txt").exists() and not (tmp_path / "empty.txt").exists()
    assert (tmp_path / "gone.txt").read_text() == "old\n"
    assert (tmp_path / "a.txt").read_text() == V0


async def test_a_created_file_the_user_changed_or_a_deleted_one_back_again_is_a_conflict(
    tmp_path: Path,
) -> None:
    (tmp_path / "new.txt").write_text("made\nand the user's\n")
    (tmp_path / "gone.txt").write_text("the user's own\n")
    s = Session(tmp_path)
    first = s.prompt("one")
    s.run("r1", _file("r1", "new.txt", None, "made\n"), _file("r1", "gone.txt", "old\n", None))
    s.prompt("two")
    s.run("r2", _file("r2", "other.txt", None, "x\n"))
    (tmp_path / "other.txt").write_text("x\nand mine\n")
    assert await _plan(s, first) == {
        "gone.txt": ("conflict", "created again since the agent deleted it for “one”"),
        "new.txt": ("conflict", "changed since the agent wrote it for “one”"),
        "other.txt": ("conflict", "changed since the agent wrote it for “two”"),
    }
    assert await _rewind(s, first, tmp_path) == {
        "gone.txt": "conflict",
        "new.txt": "conflict",
        "other.txt": "conflict",
    }
    assert (tmp_path / "new.txt").read_text() == "made\nand the user's\n"
    assert (tmp_path / "gone.txt").read_text() == "the user's own\n"


async def test_a_recorded_path_outside_the_workspace_is_never_touched(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "t.txt").write_text(V1)
    os.symlink(outside, ws / "link")
    s = Session(ws)
    first = s.prompt("one")
    s.run("r1", _file("r1", "link/t.txt", V0, V1), _file("r1", "../outside/t.txt", V0, V1))
    outcomes = await _rewind(s, first, ws)
    assert outcomes == {"link/t.txt": "unrestorable", "../outside/t.txt": "unrestorable"}
    assert (outside / "t.txt").read_text() == V1


async def test_outside_git_each_runs_shell_commands_are_named_in_git_none(tmp_path: Path) -> None:
    s = Session(tmp_path)
    first = s.prompt("build it")
    s.run("r1", commands=("make all", "sed -i s/a/b/ x.txt"))
    s.prompt("and test")
    s.run("r2", commands=("pytest -q",))
    plan = await plan_rewind(s.tree, first.id, LocalFileOps(), git=False)
    assert len(plan.notes) == 2
    assert "'build it'" in plan.notes[0] and "`make all`, `sed -i s/a/b/ x.txt`" in plan.notes[0]
    assert "'and test'" in plan.notes[1] and "`pytest -q`" in plan.notes[1]
    assert (await plan_rewind(s.tree, first.id, LocalFileOps(), git=True)).notes == []


async def test_a_file_changed_between_the_plan_and_the_write_is_a_conflict(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(V1)
    s = Session(tmp_path)
    first = s.prompt("one")
    s.run("r1", _file("r1", "a.txt", V0, V1))
    plan = await plan_rewind(s.tree, first.id, LocalFileOps(), git=True)
    (tmp_path / "a.txt").write_text(V1 + "meanwhile\n")
    done = await apply_plan(plan, LocalFileOps(), tmp_path)
    assert [(f.outcome, f.reason) for f in done] == [
        ("conflict", "the file changed while the rewind was worked out")
    ]
    assert (tmp_path / "a.txt").read_text() == V1 + "meanwhile\n"


async def test_only_a_user_message_of_the_active_branch_is_a_checkpoint(tmp_path: Path) -> None:
    s = Session(tmp_path)
    first = s.prompt("one")
    s.run("r1")
    answer = s.tree.branch()[-2]
    with pytest.raises(RewindError) as caught:
        await plan_rewind(s.tree, answer.id, LocalFileOps(), git=True)
    assert caught.value.code == "invalid_params" and "not a user message" in caught.value.message
    s.tree.leaf_id = first.parent_id  # another branch is active now
    s.prompt("elsewhere")
    for entry_id, code in ((first.id, "invalid_params"), ("nope", "entry_not_found")):
        with pytest.raises(RewindError) as caught:
            await plan_rewind(s.tree, entry_id, LocalFileOps(), git=True)
        assert caught.value.code == code
