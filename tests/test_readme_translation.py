"""README.zh-CN.md is a faithful Simplified-Chinese README: section by section it has the English README's headings
(levels, order), code blocks (the commands; comments may be translated), tables (rows and the code in each row),
links and commands. A change to one README that the other lacks fails here."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGLISH, CHINESE = ROOT / "README.md", ROOT / "README.zh-CN.md"

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
_INDENTED = re.compile(r"(?:^(?: {4}).*\n)+", re.M)
_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_COMMAND = re.compile(r"^(?::Kgent|kgent|make|uvicorn|python|pip|\.venv/bin/)\b")
_COMMENT = re.compile(r"\s+#\s.*$")


def _sections(path: Path) -> list[tuple[str, str]]:
    """(the heading's level marks, the section's text) for the preamble and each heading, in order."""
    text = path.read_text(encoding="utf-8")
    parts = re.split(r"^(#{1,6}) .*$", text, flags=re.M)
    return [("", parts[0])] + list(zip(parts[1::2], parts[2::2], strict=True))


def _outside_code(text: str) -> str:
    return _INDENTED.sub("", _FENCE.sub("", text))


def _code(section: str) -> list[tuple[str, list[str]]]:
    blocks = []
    for lang, body in _FENCE.findall(section):
        if lang:  # commands: each line without its trailing comment
            lines = [_COMMENT.sub("", line) for line in body.splitlines()]
        else:  # a file tree: its paths (the descriptions are prose)
            lines = re.findall(r"[\w.-]*/[\w./<>-]*", body)
        blocks.append((lang, lines))
    return blocks


def _tables(section: str) -> list[list[list[str]]]:
    """Each table as its rows, each row as the code spans in it (the header and rule rows left out)."""
    tables: list[list[list[str]]] = []
    previous = False
    for line in _outside_code(section).splitlines():
        row = line.startswith("|")
        if row and not previous:
            tables.append([])
        if row and not re.fullmatch(r"\|(?:-+\|)+", line):
            tables[-1].append(_SPAN.findall(line))
        previous = row
    return [t[1:] for t in tables]


def _facts(path: Path) -> list[dict[str, object]]:
    facts = []
    for level, text in _sections(path):
        prose = _outside_code(text)
        facts.append(
            {
                "level": level,
                "code": _code(text),
                "indented": _INDENTED.findall(_FENCE.sub("", text)),
                "tables": _tables(text),
                "links": [t for t in _LINK.findall(prose) if not t.startswith("README")],
                "commands": Counter(s for s in _SPAN.findall(prose) if _COMMAND.match(s)),
            }
        )
    return facts


def test_the_english_readme_links_the_chinese_one_and_back() -> None:
    assert "[简体中文](README.zh-CN.md)" in ENGLISH.read_text(encoding="utf-8").split("\n## ")[0]
    assert "[English](README.md)" in CHINESE.read_text(encoding="utf-8").split("\n## ")[0]


def test_both_have_the_same_sections() -> None:
    english, chinese = _sections(ENGLISH), _sections(CHINESE)
    assert [level for level, _ in chinese] == [level for level, _ in english]
    assert len(english) > 10


@pytest.mark.parametrize("fact", ["code", "indented", "tables", "links", "commands"])
def test_each_section_has_the_same(fact: str) -> None:
    english, chinese = _facts(ENGLISH), _facts(CHINESE)
    headings = re.findall(r"^#{1,6} (.*)$", ENGLISH.read_text(encoding="utf-8"), re.M)
    for index, (en, zh) in enumerate(zip(english, chinese, strict=True)):
        where = headings[index - 1] if index else "(before the first section)"
        assert zh[fact] == en[fact], f"{fact} of section {where!r} differ"


def test_the_chinese_readme_is_chinese() -> None:
    prose = _outside_code(CHINESE.read_text(encoding="utf-8"))
    han = len(re.findall(r"[\u4e00-\u9fff]", prose))
    assert han > 3000, han
