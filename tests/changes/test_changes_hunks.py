"""Hunks: cutting a change into pieces, reverting any subset of them (alone or after the user's edits elsewhere), and
recovering the text before a git patch."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from kgent.changes.hunks import Hunk, compute_hunks, patch_sections, reverse_patch, revert

WORDS = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "e\n", "f"]), max_size=12)


def _text(words: list[str]) -> str:
    return "".join(w if w.endswith("\n") or i == len(words) - 1 else w + "\n" for i, w in enumerate(words))


@given(WORDS, WORDS, st.data())
def test_reverting_every_hunk_gives_back_the_text_before(
    a: list[str], b: list[str], data: st.DataObject
) -> None:
    before, after = _text(a), _text(b)
    hunks = compute_hunks(before, after)
    text, done = revert(after, hunks)
    assert text == before and all(done.values())
    # Any subset, reverted one call at a time in any order, never conflicts (context stops at neighbours) …
    order = data.draw(st.permutations(hunks))
    current = after
    for h in order:
        current, done = revert(current, [h])
        assert done[h.id], (before, after, h)
    assert current == before
    # … and round-trips through the stored form.
    assert [Hunk.from_dict(h.to_dict()) for h in hunks] == hunks


def test_one_of_four_hunks_is_reverted_and_the_others_stay() -> None:
    before = "".join(f"{w}\n" for w in "alpha beta charlie delta echo foxtrot golf hotel".split())
    after = before.replace("beta", "BETA").replace("golf", "GOLF")
    beta, golf = compute_hunks(before, after)
    assert (beta.old_start, beta.new_start, beta.old_text, beta.new_text) == (2, 2, "beta\n", "BETA\n")
    text, done = revert(after, [golf])
    assert text == before.replace("beta", "BETA") and done == {golf.id: True}


def test_a_hunk_whose_lines_changed_conflicts_and_nothing_is_touched() -> None:
    before = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
    after = before.replace("four", "FOUR")
    (h,) = compute_hunks(before, after)
    for edited in (after.replace("FOUR", "FOUR!"), after.replace("three", "3")):  # the line, or its context
        text, done = revert(edited, [h])
        assert text == edited and done == {h.id: False}
    # Lines added above move it; it is still found.
    moved = "zero\n" + after
    text, done = revert(moved, [h])
    assert text == "zero\n" + before and done[h.id]


def test_created_and_deleted_files() -> None:
    (created,) = compute_hunks(None, "new\nfile\n")
    assert revert("new\nfile\n", [created]) == ("", {created.id: True})
    (deleted,) = compute_hunks("old\n", None)
    assert revert(None, [deleted]) == ("old\n", {deleted.id: True})


def test_reverse_patch_recovers_the_text_before_a_git_change(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    (tmp_path / "a.txt").write_text("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\nend")
    (tmp_path / "gone.txt").write_text("bye\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    after = "0\n1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\nEND\n"
    (tmp_path / "a.txt").write_text(after)
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "new.txt").write_text("fresh\n")
    git("add", "-A")
    sections = patch_sections(git("diff", "--cached", "--no-color", "--src-prefix=a/", "--dst-prefix=b/"))
    assert sorted(sections) == ["a.txt", "gone.txt", "new.txt"]
    assert reverse_patch(after, sections["a.txt"]) == ("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\nend", after)
    assert reverse_patch(None, sections["gone.txt"]) == ("bye\n", None)
    assert reverse_patch("fresh\n", sections["new.txt"]) == (None, "fresh\n")
    assert reverse_patch("not what the patch says\n", sections["a.txt"]) is None


def test_thousands_of_scattered_changes_are_cut_finely_and_revert_exactly() -> None:
    """Unique lines anchor the diff, so every changed line is its own hunk (difflib alone would take minutes)."""
    before = "".join(f"line {i}\n" for i in range(20000))
    after = "".join(f"line {i}\n" if i % 7 else f"changed {i}\n" for i in range(20000))
    hunks = compute_hunks(before, after)
    assert len(hunks) == 2858 and all(len(h.new_lines) == 1 for h in hunks)
    assert revert(after, hunks[1::2])[1] == {h.id: True for h in hunks[1::2]}
    assert revert(after, hunks)[0] == before
    # Without anchors (only repeated lines) a large gap stays one change.
    flat = compute_hunks("x\n" * 20000, "".join("y\n" if i % 5 == 0 else "x\n" for i in range(20000)))
    assert len(flat) == 1
