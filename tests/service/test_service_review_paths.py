"""agent/applyReview never writes (nor reads) outside the workspace: a recorded path that is absolute, climbs out with
`..`, or ends outside once symlinks are resolved gives that hunk a `conflict` naming why, and nothing is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgent.changes.hunks import compute_hunks
from kgent.files.ops import LocalFileOps
from kgent.service.review import apply_review, current_starts, review_files
from kgent.session.entries import SessionInfo, SessionTree, new_entry

BEFORE, AFTER = "keep\n", "keep\nadded by the run\n"


def _tree(workspace: Path, paths: list[str]) -> SessionTree:
    """A session whose one run recorded the same one-line addition to each of `paths`."""
    tree = SessionTree(info=SessionInfo(id="s1", workspace=str(workspace), created="2026-01-01T00:00:00Z"))
    files = []
    for n, rel in enumerate(paths):
        hunks = [
            {**h.to_dict(), "id": f"h{n}"} for h in compute_hunks(BEFORE, AFTER)
        ]  # one hunk per file, ids known
        files.append({"path": rel, "created": False, "deleted": False, "hunks": hunks})
    tree.add([new_entry("review", None, runId="run-1", files=files)])
    return tree


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    for d in (workspace, outside):
        (d / "target.txt").write_text(AFTER)
    (workspace / "sub").mkdir()
    (workspace / "sub" / "inner.txt").write_text(AFTER)
    os.symlink(outside, workspace / "link-dir")
    os.symlink(outside / "target.txt", workspace / "link-file.txt")
    return workspace, outside


@pytest.mark.parametrize(
    ("rel", "why"),
    [
        ("../outside/target.txt", "leaves the workspace (..)"),
        ("sub/../../outside/target.txt", "leaves the workspace (..)"),
        ("{outside}/target.txt", "is absolute"),
        ("link-dir/target.txt", "resolves outside the workspace"),
        ("link-file.txt", "resolves outside the workspace"),
        ("", "empty or not a path"),
        (".", "resolves outside the workspace"),
    ],
)
async def test_a_recorded_path_outside_the_workspace_is_refused_and_nothing_written(
    places: tuple[Path, Path], rel: str, why: str
) -> None:
    workspace, outside = places
    rel = rel.format(outside=outside)
    tree = _tree(workspace, [rel])
    results, entry = await apply_review(tree, LocalFileOps(), [], ["h0"])
    assert [r.outcome for r in results] == ["conflict"] and entry is None
    assert why in (results[0].message or "") and "nothing written" in (results[0].message or "")
    assert (outside / "target.txt").read_text() == AFTER  # the outside file is untouched
    assert await current_starts(LocalFileOps(), workspace, review_files(tree)) == {"h0": None}


async def test_paths_inside_the_workspace_are_still_reverted_next_to_a_refused_one(
    places: tuple[Path, Path],
) -> None:
    workspace, outside = places
    tree = _tree(workspace, ["sub/inner.txt", "../outside/target.txt", "./target.txt"])
    results, entry = await apply_review(tree, LocalFileOps(), [], ["h0", "h1", "h2"])
    assert [r.outcome for r in results] == ["rejected", "conflict", "rejected"] and entry is not None
    assert (workspace / "sub" / "inner.txt").read_text() == BEFORE
    assert (workspace / "target.txt").read_text() == BEFORE
    assert (outside / "target.txt").read_text() == AFTER
