"""The docs the seeds list exist and say true things: every link of the overview, the seeds' mapping, the DeepSeek
guide and the permissions page resolves, and every Kgent path and command the mapping names is there."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from kgent.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = ("README.md", "seeds.md", "deepseek.md", "permissions.md")
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_resolves(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    links = [link for link in _LINK.findall(text) if "://" not in link]
    assert links or page == "deepseek.md"
    missing = [link for link in links if not (DOCS / link).exists()]
    assert missing == []


def test_the_readme_links_the_overview_and_the_code_of_conduct() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/README.md)" in readme and "(CODE_OF_CONDUCT.md)" in readme
    assert (ROOT / "CODE_OF_CONDUCT.md").is_file()


def _kgent_column(page: str) -> str:
    rows = [line for line in (DOCS / page).read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    return "\n".join(row.split(" | ", 1)[1] for row in rows if " | " in row)


def test_the_mapped_paths_exist() -> None:
    paths = re.findall(r"`(server/kgent/[\w/.]+)`", _kgent_column("seeds.md"))
    assert len(paths) > 8
    assert [p for p in paths if not (ROOT / p).exists()] == []


def test_the_mapped_asgi_app_and_names_import() -> None:
    assert importlib.import_module("kgent.http.asgi").app is not None
    kgent = importlib.import_module("kgent")
    assert kgent.ScriptedProvider.streamed_run() is not None and kgent.AgentKernel is not None


def test_the_mapped_subcommands_exist(capsys: pytest.CaptureFixture[str]) -> None:
    commands = set(re.findall(r"`kgent (\w+)", _kgent_column("seeds.md")))
    assert {"debug", "demo", "run", "serve", "desktop"} <= commands
    for command in sorted(commands):
        with pytest.raises(SystemExit) as done:
            main([command, "--help"])
        assert done.value.code == 0, command
    capsys.readouterr()
