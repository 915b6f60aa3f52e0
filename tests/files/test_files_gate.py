"""The files gate on real files: inside after symlinks, protected names, hard links, regular files, the size cap,
configuration refused for writes, the check on the opened file, and GatedFiles in front of a FileOps."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgent.files import gate
from kgent.files.configs import configures
from kgent.files.gatedops import GatedFiles
from kgent.files.ops import LocalFileOps


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "src").mkdir(parents=True)
    outside.mkdir()
    (ws / "src" / "a.txt").write_text("inside\n")
    (ws / ".env").write_text("SECRET=1\n")
    (outside / "secret.txt").write_text("outside\n")
    return ws, outside


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda ws, out: os.symlink(ws / ".env", ws / "AGENTS.md"), "protected"),
        (lambda ws, out: os.symlink(out / "secret.txt", ws / "AGENTS.md"), "outside"),
        (lambda ws, out: os.link(out / "secret.txt", ws / "AGENTS.md"), "hardlinked"),
        (lambda ws, out: os.mkfifo(ws / "AGENTS.md"), "not_regular"),
    ],
    ids=["link-to-secret", "link-outside", "hard-link", "fifo"],
)
def test_a_file_kgent_reads_on_its_own_is_refused_with_the_reason(
    place: tuple[Path, Path], make: object, why: str
) -> None:
    ws, outside = place
    make(ws, outside)  # type: ignore[operator]
    with pytest.raises(gate.Refused) as refused:
        gate.read_file(ws, "AGENTS.md")
    assert refused.value.why == why and refused.value.reason.startswith("refused: ")
    assert "SECRET" not in str(refused.value) and "outside\n" not in str(refused.value)


def test_a_link_that_stays_inside_is_read_and_the_cap_holds(place: tuple[Path, Path]) -> None:
    ws, _ = place
    os.symlink(ws / "src" / "a.txt", ws / "AGENTS.md")
    assert gate.read_file(ws, "AGENTS.md")[0] == b"inside\n"
    assert gate.read_head(ws, "AGENTS.md", limit=3)[0] == b"insi"  # limit + 1: the caller says it was cut
    with pytest.raises(gate.Refused) as refused:
        gate.read_file(ws, "AGENTS.md", limit=3)
    assert refused.value.why == "too_large"
    with pytest.raises(FileNotFoundError):
        gate.read_file(ws, "missing.md")


def test_the_users_own_file_may_link_out_but_never_to_a_secret(
    place: tuple[Path, Path], tmp_path: Path
) -> None:
    _, outside = place
    mine = tmp_path / "config"
    mine.mkdir()
    os.symlink(outside / "secret.txt", mine / "AGENTS.md")
    assert gate.read_file(mine, "AGENTS.md", outside_ok=True)[0] == b"outside\n"
    (outside / "id_rsa").write_text("key\n")
    os.symlink(outside / "id_rsa", mine / "CLAUDE.md")
    with pytest.raises(gate.Refused):
        gate.read_file(mine, "CLAUDE.md", outside_ok=True)


@pytest.mark.parametrize(
    "rel",
    [
        ".kgent/config.toml",
        ".kgent/agents/x.md",
        ".mcp.json",
        ".vscode/settings.json",
        ".vscode/tasks.json",
        ".idea/workspace.xml",
        ".git/hooks/post-commit",
        ".git/config",
        ".envrc",
        ".nvim.lua",
        ".exrc",
        ".pre-commit-config.yaml",
        "sub/.VSCODE/settings.json",
        ".husky/pre-commit",
    ],
)
def test_configuration_is_named_and_refused_for_a_write_without_approval(
    place: tuple[Path, Path], rel: str
) -> None:
    ws, _ = place
    assert configures(rel)
    if not rel.startswith((".git/", ".env")):  # those are protected for reading too
        gate.admit(ws, rel)  # reading it is the gate's ordinary business
    with pytest.raises(gate.Refused):
        gate.admit(ws, rel, write=True)
    assert gate.admit(ws, rel, write=True, protected_ok=True).configures


@pytest.mark.parametrize(
    "rel", ["src/app.py", "README.md", "kgent/config.toml", "docs/vscode.md", ".gitignore"]
)
def test_ordinary_files_are_not_configuration(rel: str) -> None:
    assert not configures(rel)


async def test_gated_files_admit_every_path_before_the_inner_file_ops(place: tuple[Path, Path]) -> None:
    ws, outside = place
    os.symlink(outside / "secret.txt", ws / "escape.txt")
    fs = GatedFiles(LocalFileOps(), ws)
    assert await fs.read_bytes(ws / "src" / "a.txt") == b"inside\n"
    for path in (ws / ".env", ws / "escape.txt", outside / "secret.txt"):
        with pytest.raises(gate.Refused):
            await fs.read_bytes(path)
    assert await fs.exists(ws / ".env")  # existence is no secret; its contents are
    with pytest.raises(gate.Refused):
        await fs.write_bytes_atomic(ws / ".vscode" / "settings.json", b"{}")
    assert not (ws / ".vscode").exists()
    approved = GatedFiles(LocalFileOps(), ws, outside_ok=True, protected_ok=True)
    assert await approved.read_bytes(ws / ".env") == b"SECRET=1\n"
    assert await approved.read_bytes(ws / "escape.txt") == b"outside\n"
