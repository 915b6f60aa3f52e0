"""Mirrors, checkouts at base_commit and the patch, on real git repos."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from swebench_fixtures import Fixture, git

from kgent.swebench.instances import instance_from_dict
from kgent.swebench.workspace import Mirrors, Patch, WorkspaceError, check_patch, collect_patch, prepare


def calc(fx: Fixture, **change: str):  # type: ignore[no-untyped-def]
    return instance_from_dict({**fx.record("acme__calc-1"), **change})


async def test_a_checkout_is_clean_at_base_commit_and_cannot_reach_the_fix(
    fixture: Fixture, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    (ws / "junk").mkdir(parents=True)  # whatever a killed run left there goes
    instance = calc(fixture)
    await prepare(instance, fixture.mirrors / "acme__calc.git", ws)
    assert git("rev-parse", "HEAD", cwd=ws) == instance.base_commit
    assert git("status", "--porcelain", "--untracked-files=all", cwd=ws) == ""
    assert git("for-each-ref", cwd=ws) == ""  # no branch, tag or remote: only the detached HEAD
    assert git("log", "--all", "--format=%H", cwd=ws).splitlines()[0] == instance.base_commit  # and its past
    assert git("reflog", cwd=ws) == ""
    assert fixture.future["acme/calc"] not in git("log", "--all", "--reflog", "--format=%H", cwd=ws)
    assert not (ws / "junk").exists()


async def test_a_commit_missing_from_the_mirror_says_how_to_update_it(
    fixture: Fixture, tmp_path: Path
) -> None:
    with pytest.raises(WorkspaceError, match="is not in .*acme__calc.git: update the mirror"):
        await prepare(
            calc(fixture, base_commit="b" * 40), fixture.mirrors / "acme__calc.git", tmp_path / "ws"
        )


async def test_a_missing_mirror_is_cloned_once_from_the_url_template(
    fixture: Fixture, tmp_path: Path
) -> None:
    sources = tmp_path / "remote"
    sources.mkdir()
    os.rename(fixture.mirrors / "acme__calc.git", sources / "acme__calc.git")
    mirrors = Mirrors(tmp_path / "cache", clone_url=f"file://{sources}/{{owner}}__{{name}}.git")
    first = await mirrors.ensure(calc(fixture))
    assert first == tmp_path / "cache" / "acme__calc.git"
    assert git("rev-parse", "--is-bare-repository", cwd=first) == "true"
    assert await mirrors.ensure(calc(fixture)) == first
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["acme__calc.git"]  # no partial clone left
    offline = Mirrors(tmp_path / "other", clone_url="file:///nonexistent/{repo}.git")
    with pytest.raises(WorkspaceError, match="cannot clone .* put a bare clone there"):
        await offline.ensure(calc(fixture))
    with pytest.raises(WorkspaceError, match="cloning is off"):
        await Mirrors(tmp_path / "none", clone_url=None).ensure(calc(fixture))


async def test_the_patch_holds_edits_new_files_deletions_and_commits(
    fixture: Fixture, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    instance = calc(fixture)
    await prepare(instance, fixture.mirrors / "acme__calc.git", ws)
    assert (await collect_patch(ws, instance.base_commit)).text == ""
    (ws / "calc.py").write_text((ws / "calc.py").read_text().replace("a - b", "a + b"))
    git("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qam", "agent commit", cwd=ws)
    (ws / "pkg").mkdir()
    (ws / "pkg" / "new.py").write_text("x = 1\n")
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02")
    (ws / "test_calc.py").unlink()
    patch = await collect_patch(ws, instance.base_commit)
    assert patch.files == 4 and check_patch(patch) is None
    assert (
        "+    return a + b" in patch.text
        and "new file mode" in patch.text
        and "deleted file mode" in patch.text
    )
    assert "GIT binary patch" in patch.text
    # and it applies where the harness applies it: a clean checkout at base_commit
    check = tmp_path / "check"
    await prepare(instance, fixture.mirrors / "acme__calc.git", check)
    git("apply", "--check", str(_write(tmp_path / "p.diff", patch.text)), cwd=check)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_check_patch_names_what_the_harness_could_not_use() -> None:
    assert check_patch(Patch("")) is None
    assert check_patch(Patch("diff --git a/x b/x\n")) is None
    assert "newline" in (check_patch(Patch("diff --git a/x b/x")) or "")
    assert "header" in (check_patch(Patch("--- a/x\n+++ b/x\n")) or "")
    assert "NUL" in (check_patch(Patch("diff --git a/x b/x\n\x00\n")) or "")
    assert "limit" in (check_patch(Patch("diff --git a/x b/x\n" + "+" * (11 << 20) + "\n")) or "")
