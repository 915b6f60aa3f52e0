"""Path safety: containment after `..`, absolute paths and symlinks; protected names; NUL bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgent.core.errors import KgentError
from kgent.files.paths import PathError, PathOutsideWorkspace, classify_path, resolve
from kgent.tools.read import ReadTool
from kgent.tools.write import WriteTool


def test_relative_path_resolves_inside(ws: Path) -> None:
    r = resolve(ws, "src/app.py", allow_outside=False)
    assert r.abs == ws / "src" / "app.py"
    assert (r.rel, r.inside, r.protected) == ("src/app.py", True, False)


def test_at_prefix_dot_and_normalisation(ws: Path) -> None:
    assert resolve(ws, "@src/../a.txt", allow_outside=False).rel == "a.txt"
    assert resolve(ws, ".", allow_outside=False).rel == "."
    assert resolve(ws, str(ws / "b.txt"), allow_outside=False).rel == "b.txt"


def test_dotdot_escape_denied_then_allowed(ws: Path) -> None:
    with pytest.raises(PathOutsideWorkspace) as info:
        resolve(ws, "../secret.txt", allow_outside=False)
    assert isinstance(info.value, KgentError)
    assert info.value.code == "path_outside_workspace"
    r = resolve(ws, "../secret.txt", allow_outside=True)
    assert not r.inside
    assert r.rel == (ws.parent / "secret.txt").resolve().as_posix()


def test_absolute_outside_and_tilde(ws: Path, tmp_path: Path) -> None:
    with pytest.raises(PathOutsideWorkspace):
        resolve(ws, "/etc/passwd", allow_outside=False)
    assert classify_path(ws, "~/x").abs == Path(os.path.expanduser("~/x")).resolve()
    assert not classify_path(ws, "~").inside


def test_symlink_escapes_are_outside(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "f.txt").write_text("x")
    (ws / "link").symlink_to(outside)
    (ws / "dangling").symlink_to(outside / "later.txt")
    for raw in ("link/f.txt", "link/not-yet/new.txt", "dangling"):
        r = classify_path(ws, raw)
        assert not r.inside, raw
        assert r.rel.startswith(outside.resolve().as_posix())
        with pytest.raises(PathOutsideWorkspace):
            resolve(ws, raw, allow_outside=False)
    assert resolve(ws, "link/f.txt", allow_outside=True).abs == (outside / "f.txt").resolve()


def test_symlink_inside_workspace_stays_inside(ws: Path) -> None:
    (ws / "real").mkdir()
    (ws / "alias").symlink_to(ws / "real")
    r = resolve(ws, "alias/new.txt", allow_outside=False)
    assert r.inside and r.rel == "alias/new.txt"


def test_nul_bytes(ws: Path) -> None:
    with pytest.raises(PathError):
        resolve(ws, "a\x00b", allow_outside=True)
    r = classify_path(ws, "a\x00b")  # never raises: classified conservatively
    assert not r.inside and r.protected


@pytest.mark.parametrize(
    ("raw", "protected"),
    [
        (".env", True),
        ("config/.env.local", True),
        (".envrc", True),
        (".env-prod", True),
        ("certs/server.pem", True),
        ("tls/private.key", True),
        ("home/id_rsa", True),
        ("id_ed25519", True),
        (".git/config", True),
        ("sub/.git/hooks/pre-commit", True),
        ("src/id_utils.py", False),
        ("environment.py", False),
        ("keys/notes.txt", False),
        (".gitignore", False),
        ("src/app.py", False),
    ],
)
def test_protected_paths(ws: Path, raw: str, protected: bool) -> None:
    assert classify_path(ws, raw).protected is protected


async def test_tools_turn_escapes_into_error_results(ws: Path, tmp_path: Path, make_ctx) -> None:
    (tmp_path / "outside.txt").write_text("secret\n")
    denied = await ReadTool().run({"path": "../outside.txt"}, make_ctx())
    assert denied.is_error and "outside the workspace" in denied.content
    allowed = await ReadTool().run({"path": str(tmp_path / "outside.txt")}, make_ctx(allow_outside=True))
    assert not allowed.is_error and allowed.content == "secret\n"
    wrote = await WriteTool().run({"path": "../new.txt", "content": "x"}, make_ctx())
    assert wrote.is_error and not (tmp_path / "new.txt").exists()


def test_physical_resolution_follows_a_symlink_before_dotdot(tmp_path: Path) -> None:
    """A shell resolves `link/..` to the parent of the link's target; the file tools normalize it away."""
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (tmp_path / "far" / "away").mkdir(parents=True)
    (tmp_path / "far" / "x").write_text("outside\n")
    (ws / "x").write_text("inside\n")
    (ws / "linkdir").symlink_to(tmp_path / "far" / "away", target_is_directory=True)
    lexical = classify_path(ws, "linkdir/../x")
    physical = classify_path(ws, "linkdir/../x", physical=True)
    assert (lexical.inside, lexical.rel) == (True, "x")
    assert (physical.inside, physical.rel) == (False, str(tmp_path / "far" / "x"))
    assert classify_path(ws, "sub/../x", physical=True).rel == "x"
    assert classify_path(ws, "@x", physical=True).rel == "@x"  # a shell word is taken literally


def test_a_file_with_several_hard_links_counts_as_protected(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "objects").mkdir(parents=True)
    (tmp_path / "secret").write_text("s\n")
    os.link(tmp_path / "secret", ws / "notes.txt")
    (tmp_path / "obj").write_text("o\n")
    os.link(
        tmp_path / "obj", ws / ".git" / "objects" / "pack"
    )  # git's own hard links (clone --local) are fine
    (ws / "plain.txt").write_text("p\n")
    notes = classify_path(ws, "notes.txt")
    assert notes.inside and notes.protected and notes.hardlinked
    assert classify_path(ws, "notes.txt", physical=True).hardlinked
    assert not classify_path(ws, ".git/objects/pack").hardlinked
    assert not classify_path(ws, "plain.txt").protected


def test_a_link_that_cannot_be_read_is_outside_and_protected_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /proc/1/cwd read by a process that may not follow it: realpath raises PermissionError, which used to end the
    # run as a kernel_error; the classifier says "outside, protected" instead (asked, never run unasked)
    real = os.path.realpath

    def unreadable(path: str) -> str:
        if str(path).startswith("/proc/1/cwd"):
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os.path, "realpath", unreadable)
    resolved = classify_path(tmp_path, "/proc/1/cwd/secret")
    assert not resolved.inside and resolved.protected
