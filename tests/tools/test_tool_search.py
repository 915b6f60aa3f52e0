"""grep and find through ripgrep and through the pure-Python fallback (same expectations), and ls."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kgent.tools.base import ToolContext
from kgent.tools.find import FindTool
from kgent.tools.grep import GrepTool
from kgent.tools.ls import LsTool
from kgent.tools.rg import find_rg

ENGINES = ["rg", "fallback"]


def test_the_ripgrep_wheel_binary_is_found() -> None:
    rg = find_rg()
    assert rg is not None and Path(rg).name == "rg"


@pytest.fixture
def tree(ws: Path) -> Path:
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("import os\n\ndef main():\n    return TODO\n")
    (ws / "src" / "pkg" / "util.py").write_text("x = 1\n# todo: more\ny = 2\n")
    (ws / "src" / "notes.md").write_text("TODO (a+b)\n")
    (ws / ".hidden").mkdir()
    (ws / ".hidden" / "h.py").write_text("TODO hidden\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.py").write_text("TODO built\n")
    (ws / "debug.log").write_text("TODO logged\n")
    (ws / ".gitignore").write_text("build/\n*.log\n")
    (ws / "blob.bin").write_bytes(b"TODO\x00\x01")
    return ws


def grep(engine: str) -> GrepTool:
    return GrepTool(force_fallback=engine == "fallback")


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_respects_gitignore_and_includes_hidden(tree: Path, ctx: ToolContext, engine: str) -> None:
    out = await grep(engine).run({"pattern": "TODO"}, ctx)
    assert not out.is_error
    assert out.details["engine"] == engine
    assert out.content.splitlines() == [
        ".hidden/h.py:1: TODO hidden",
        "src/app.py:4:     return TODO",
        "src/notes.md:1: TODO (a+b)",
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_options(tree: Path, ctx: ToolContext, engine: str) -> None:
    g = grep(engine)
    ci = await g.run({"pattern": "todo", "ignoreCase": True, "path": "src", "glob": "*.py"}, ctx)
    assert ci.content.splitlines() == ["src/app.py:4:     return TODO", "src/pkg/util.py:2: # todo: more"]
    lit = await g.run({"pattern": "(a+b)", "literal": True}, ctx)
    assert lit.content == "src/notes.md:1: TODO (a+b)"
    ctxl = await g.run({"pattern": "todo", "path": "src/pkg/util.py", "context": 1}, ctx)
    assert ctxl.content.splitlines() == ["src/pkg/util.py-1- x = 1", "src/pkg/util.py:2: # todo: more", "src/pkg/util.py-3- y = 2"]
    none = await g.run({"pattern": "nothing-here"}, ctx)
    assert not none.is_error and none.content == "No matches found"
    missing = await g.run({"pattern": "x", "path": "nope"}, ctx)
    assert missing.is_error and missing.content == "Path not found: nope"
    bad = await g.run({"pattern": "(unclosed"}, ctx)
    assert bad.is_error


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_limit_and_long_line_notices(ws: Path, ctx: ToolContext, engine: str) -> None:
    (ws / "many.txt").write_text("".join(f"hit {i}\n" for i in range(5)))
    (ws / "long.txt").write_text("hit " + "z" * 600 + "\n")
    out = await grep(engine).run({"pattern": "hit", "limit": 3}, ctx)
    lines = out.content.splitlines()
    assert lines[0].startswith("long.txt:1: hit zzz") and lines[0].endswith("... [truncated]")
    assert len(lines[0]) == len("long.txt:1: ") + 500 + len("... [truncated]")
    assert lines[1:3] == ["many.txt:1: hit 0", "many.txt:2: hit 1"]
    assert lines[-1] == (
        "[3 matches limit reached. Use limit=6 for more, or refine pattern. "
        "Some lines truncated to 500 chars. Use read tool to see full lines]"
    )
    exact = await grep(engine).run({"pattern": "hit", "limit": 6}, ctx)
    assert "limit reached" not in exact.content


@pytest.mark.parametrize("engine", ENGINES)
async def test_find_globs_with_gitignore(tree: Path, ctx: ToolContext, engine: str) -> None:
    f = FindTool(force_fallback=engine == "fallback")
    out = await f.run({"pattern": "*.py"}, ctx)
    assert out.content.splitlines() == [".hidden/h.py", "src/app.py", "src/pkg/util.py"]
    sub = await f.run({"pattern": "pkg/*.py", "path": "src"}, ctx)
    assert sub.content == "src/pkg/util.py"
    limited = await f.run({"pattern": "*", "limit": 2}, ctx)
    assert limited.content.endswith("\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]")
    assert len(limited.content.split("\n\n")[0].splitlines()) == 2
    none = await f.run({"pattern": "*.rs"}, ctx)
    assert none.content == "No files found matching pattern"


async def test_ls_lists_alphabetically_with_dotfiles(tree: Path, ctx: ToolContext) -> None:
    ls = LsTool()
    out = await ls.run({}, ctx)
    assert out.content.splitlines() == [
        ".gitignore", ".hidden/", "blob.bin", "build/", "debug.log", "src/",
    ]
    sub = await ls.run({"path": "src"}, ctx)
    assert sub.content.splitlines() == ["app.py", "notes.md", "pkg/"]
    limited = await ls.run({"limit": 2}, ctx)
    assert limited.content == ".gitignore\n.hidden/\n\n[2 entries limit reached. Use limit=4 for more]"
    (tree / "empty").mkdir()
    assert (await ls.run({"path": "empty"}, ctx)).content == "(empty directory)"
    assert (await ls.run({"path": "src/app.py"}, ctx)).content == "Not a directory: src/app.py"
    assert (await ls.run({"path": "ghost"}, ctx)).content == "Path not found: ghost"
    assert (await ls.run({"path": ".."}, ctx)).is_error
    assert ls.describe({"path": "src"}, ctx).title == "List src"


@pytest.fixture
def secrets_tree(ws: Path, tmp_path: Path) -> Path:
    (ws / "app.py").write_text("token = read_secret()\n")
    (ws / ".env").write_text("API_KEY=secret-env\n")
    (ws / ".envrc").write_text("export TOKEN=secret-envrc\n")
    (ws / "keys").mkdir()
    (ws / "keys" / "server.pem").write_text("secret-pem\n")
    (ws / "keys" / "id_ed25519").write_text("secret-ssh\n")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("url = https://secret-token@example.com/x\n")
    (tmp_path / "outside.txt").write_text("secret-outside\n")
    (ws / "link.txt").symlink_to(tmp_path / "outside.txt")
    return ws


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("glob", [None, "*", "**"])
async def test_grep_over_a_directory_never_reads_protected_files_or_follows_links(
    secrets_tree: Path, ctx: ToolContext, engine: str, glob: str | None
) -> None:
    # A workspace search is a read the policy allows without asking; secrets need an approval of their own.
    args = {"pattern": "secret"} | ({"glob": glob} if glob else {})
    out = await grep(engine).run(args, ctx)
    assert out.content.splitlines() == ["app.py:1: token = read_secret()"]
    in_keys = await grep(engine).run({"pattern": "secret", "path": "keys"}, ctx)
    assert in_keys.content == "No matches found"


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_of_a_protected_file_itself_searches_it(secrets_tree: Path, ctx: ToolContext, engine: str) -> None:
    # Naming the protected file is what the policy asks the person about; once approved, the search runs.
    out = await grep(engine).run({"pattern": "API_KEY", "path": ".env"}, ctx)
    assert out.content == ".env:1: API_KEY=secret-env"


@pytest.mark.parametrize("engine", ENGINES)
async def test_find_star_does_not_list_git_internals(secrets_tree: Path, ctx: ToolContext, engine: str) -> None:
    out = await FindTool(force_fallback=engine == "fallback").run({"pattern": "*"}, ctx)
    names = out.content.splitlines()
    assert ".env" in names and "app.py" in names
    assert not any(n.startswith(".git/") for n in names) and "link.txt" not in names


@pytest.mark.parametrize("fallback", [False, True])
async def test_a_directory_search_skips_files_with_several_hard_links(
    ws: Path, make_ctx: Any, tmp_path: Path, fallback: bool
) -> None:
    (tmp_path / "outside.txt").write_text("HARDLINK_MARKER outside\n")
    os.link(tmp_path / "outside.txt", ws / "notes.txt")
    (ws / "mine.txt").write_text("HARDLINK_MARKER inside\n")
    out = await GrepTool(force_fallback=fallback).run({"pattern": "HARDLINK_MARKER"}, make_ctx())
    assert "mine.txt" in out.content and "outside" not in out.content
