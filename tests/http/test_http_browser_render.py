"""The streamed render of an answer (editors/web/src/stream.ts, issue 37) in a real browser: whatever the deltas and
however they fall into frames, the answer ends as a one-shot render of its whole text would draw it (the same HTML),
and the Markdown work stays linear in the answer's length (counted, not timed: bytes markdown-it parsed).

The stream is driven in the page with a scheduler of the test's own: its frames run when the test says (after every
delta, or every few), so the boundaries it meets — a fence spanning many deltas, a list that a partial line may still
continue, a table whose delimiter row comes later, a CRLF cut between deltas — are met deterministically."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect
from test_http_browser import context, open_page, start_run, wait_for  # noqa: F401 - a fixture

from kgent.testing.http_server import HttpServer, write_script

# Streams `deltas` into a detached node, running the frames it asked for after every `every` deltas, then ends it
# (with the whole text, as the web client does at message_end); `via: "set"` feeds the text so far instead (as the
# VS Code panel does). Returns what it drew, a one-shot render of the text, and the stream's counted work.
STREAM = """([deltas, every, via]) => {
  const frames = [];
  const node = document.createElement("div");
  const stream = window.kgent.markdownStream(node, { schedule: (work) => frames.push(work), openMs: 0 });
  const run = () => { while (frames.length) frames.shift()(); };
  let text = "";
  const middle = [];
  deltas.forEach((delta, i) => {
    text += delta;
    if (via === "set") stream.set(text); else stream.append(delta);
    if ((i + 1) % every === 0) run();
    if (i === Math.floor(deltas.length / 2)) middle.push(node.querySelectorAll(".md-block").length);
  });
  run();
  stream.end(text);
  run();
  return {
    streamed: window.kgent.streamedHtml(node),
    once: window.kgent.renderedHtml(text),
    blocks: node.querySelectorAll(".md-block").length,
    middle: middle[0],
    open: node.querySelector(".md-open").childNodes.length,
    renders: stream.stats.renders,
    parsed: stream.stats.bytesParsed,
    text: stream.text,
  };
}"""

BIG_CODE = "".join(f"    line_{i} = compute({i}, 'x' * {i % 7})  # a comment\n" for i in range(500))  # ~26 KB
BIG_LIST = "".join(
    f"{i + 1}. item {i} with **bold** and `code` words words words\n" for i in range(400)
)  # ~24 KB

DOCUMENTS = {
    "ordered list continued after a blank line": "1. one\n\n2. two\n\n10. ten\n\nafter\n",
    "bullet list, tight then loose": "- a\n- b\n\n- c\n\nend\n",
    "nested lists": "- a\n  - b\n    - c\n- d\n\n1) x\n2) y\n",
    "setext headings": "Title\n=====\n\nSub\n---\n\npara\n---\n",
    "a table after a paragraph": "intro line\n| a | b |\n|---|:-:|\n| 1 | 2 |\n| `x` | **y** |\n\nafter the table\n",
    "fences: backticks, tildes, nested": "```python\nprint('hi')\n```\n\n~~~\ncode ~~~\n~~~\n\n````md\n```\ninner\n```\n````\nafter\n",
    "an unclosed fence at the end": "text\n\n```js\nconst a = 1;\nconst b = 2;",
    "a closing fence then text at once": "```sh\necho hi\n```\nright after\n",
    "indented code": "para\n\n    code 1\n\n    code 2\nend\n",
    "blockquote with lazy lines": "> quoted\nlazy line\n\n> again\n> - in a list\n\nout\n",
    "reference links, forward and back": '[fwd][r] text\n\n[r]: https://example.com/a "T"\n\nback [r] and [r][]\n',
    "markup in text stays text": "<b>bold</b> & <script>alert(1)</script>\n\n<div>block</div>\n",
    "emphasis across lines": "*one\ntwo* and **three\nfour**\n\n# heading\n- list right after\n",
    "rules and headings": "a\n\n---\n\n# h1\n## h2\n***\ntext\n",
    "links and images": 'see https://example.com and [x](https://x.y "t") ![img](https://x.y/i.png)\n',
    "crlf line ends": "a\r\n\r\n```\r\ncode\r\n```\r\n\r\n- x\r\n- y\r\n",
    "a long code block": f"Here:\n\n```python\n{BIG_CODE}```\n\nDone.\n",
    "a long open code block": f"Here:\n\n```python\n{BIG_CODE}",
    "a long list": f"Items:\n\n{BIG_LIST}\nDone.\n",
    "a long list, loose late": f"{BIG_LIST}\n401. the last one, after a blank line\n",
    "a long list, an item of two paragraphs late": f"{BIG_LIST}401. one\n\n     two\n402. three\n",
    "a long loose list": BIG_LIST.replace("\n", "\n\n"),
    "a long nested list": "".join(
        f"- item {i}\n  - sub {i} with *words*\n" + ("\n  - after a blank line\n" if i % 97 == 5 else "")
        for i in range(300)
    ),
    "long lists, a paragraph between": f"{BIG_LIST}\nA paragraph.\n\n* star {BIG_LIST[3:200]}\n+ plus\n\n1) paren\n",
    "a long list with code in its items": "".join(
        f"{i + 1}. step {i}:\n   ```sh\n   echo {i}\n   ```\n" for i in range(150)
    ),
    "a long list with lazy lines and empty items": "".join(
        f"- item {i}\nlazy {i}\n-\n" if i % 50 == 1 else f"- item {i} words words\n" for i in range(300)
    ),
}


def splits(text: str, how: str) -> list[str]:
    if how == "chars":
        return list(text)
    if how == "lines":
        return text.splitlines(keepends=True)
    r = random.Random(len(text))
    out, at = [], 0
    while at < len(text):
        n = r.randint(1, 12)
        out.append(text[at : at + n])
        at += n
    return out


def stream(page: Page, deltas: list[str], every: int = 1, via: str = "append") -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(STREAM, [deltas, every, via])
    return result


@pytest.fixture(scope="module")
def page(browser: Browser, server: HttpServer) -> Iterator[Page]:  # noqa: F811 - the fixture
    """One page for the in-page streams (each test makes its own detached nodes); no page error may occur."""
    ctx = browser.new_context()
    errors: list[str] = []
    ctx.on("weberror", lambda e: errors.append(str(e.error)))
    try:
        page = open_page(ctx, server)
        yield page
        assert (
            page.evaluate("window.kgent.streamTotals.failures") == 0
        )  # no stream fell back to whole renders
    finally:
        ctx.close()
    assert not errors, errors


@pytest.mark.parametrize("name", list(DOCUMENTS))
def test_a_streamed_answer_ends_as_a_one_shot_render(page: Page, name: str) -> None:
    text = DOCUMENTS[name]
    ways = ["chars", "random", "lines"] if len(text) < 2000 else ["random", "lines"]
    for how in ways:
        for every in (1, 3):
            got = stream(page, splits(text, how), every)
            assert got["streamed"] == got["once"], (name, how, every)
            assert got["text"] == text.replace("\r\n", "\n")
            assert got["open"] == 0  # ended: every block closed


def test_a_stream_fed_the_text_so_far_ends_the_same(page: Page) -> None:
    """The VS Code panel gets the whole text of an answer each update (every 50 ms): `set` renders only what is new."""
    text = "".join(DOCUMENTS.values())
    deltas = splits(text, "random")
    got = stream(page, deltas, every=2, via="set")
    assert got["streamed"] == got["once"]
    assert got["parsed"] <= 4 * len(text), got["parsed"]


def test_closed_blocks_are_drawn_once_while_the_answer_streams(page: Page) -> None:
    text = "".join(f"Paragraph {i} with *some* words.\n\n" for i in range(200))
    got = stream(page, splits(text, "random"), every=1)
    assert got["middle"] >= 20  # half way, blocks were kept closed (a box each frame that closed some)
    assert got["streamed"] == got["once"]


@pytest.mark.parametrize(
    ("name", "bound"),
    [
        # a frame after every delta (of 1-12 bytes) is the worst case: each frame parses the open block again. Small
        # blocks (paragraphs) are parsed again whole every frame: a constant (their length over a delta's) per byte;
        # a long block once it grew by an eighth (a geometric series); an open code block not until it closes.
        ("paragraphs", 60),
        ("a long code block", 6),
        ("a long list", 24),
        ("a long open code block", 6),
    ],
)
def test_the_markdown_work_is_linear_in_the_answer(page: Page, name: str, bound: int) -> None:
    """Bytes parsed per byte of answer stay under a constant, the same for an answer four times as long (re-rendering
    the whole answer, or a whole open block, per delta grows with the square: the ratio would grow fourfold)."""
    ratios = []
    for scale in (1, 4):
        if name == "paragraphs":
            text = "".join(f"Paragraph {i}: " + "word " * 30 + "\n\n" for i in range(150 * scale))
        elif name == "a long list":
            text = BIG_LIST * scale
        else:
            text = DOCUMENTS[name].replace(BIG_CODE, BIG_CODE * scale)
        got = stream(page, splits(text, "random"), every=1)
        assert got["streamed"] == got["once"], name
        ratios.append(got["parsed"] / len(text))
    assert ratios[1] <= bound, (name, ratios)
    assert ratios[1] <= 1.15 * ratios[0] + 0.5, (name, ratios)


def test_a_backlog_is_drawn_in_slices(page: Page) -> None:
    """Text that came while no frame ran (a hidden tab, a burst) is taken in a frame's share at a time."""
    text = "".join(f"Paragraph {i}: " + "word " * 30 + "\n\n" for i in range(2000))  # ~330 KB
    result = page.evaluate(
        """(text) => {
          const frames = [];
          const node = document.createElement("div");
          const stream = window.kgent.markdownStream(node, { schedule: (work) => frames.push(work) });
          stream.append(text);
          let n = 0;
          while (frames.length) { frames.shift()(); n++; }
          stream.end(text);
          while (frames.length) { frames.shift()(); n++; }
          return { frames: n, same: window.kgent.streamedHtml(node) === window.kgent.renderedHtml(text) };
        }""",
        text,
    )
    assert result["same"]
    assert result["frames"] >= len(text) // (64 * 1024)  # no frame took more than the most a slice may be


def test_a_long_answer_through_the_server_ends_as_a_one_shot_render(
    context: BrowserContext,  # noqa: F811 - the fixture
    server: HttpServer,
    tmp_path: Path,
) -> None:
    """The whole path: a real run streams an answer of every kind of block a word a delta; once the run ended and the
    page drew it, the answer is what a one-shot render draws, and markdown-it parsed it a few times at most."""
    text = "".join(DOCUMENTS.values()).replace("\r\n", "\n")
    model = write_script(tmp_path, "mixed", [[{"text": text[i : i + 400]} for i in range(0, len(text), 400)]])
    page = open_page(context, server)
    before = page.evaluate("window.kgent.streamTotals.bytesParsed")
    start_run(page, f"scripted/{model}", "every kind of block", mode="full")
    expect(page.locator(".run-end")).to_be_visible()
    wait_for(page, "window.kgent.streamTotals.busy === 0")
    same = page.evaluate(
        """(text) => {
          const body = [...document.querySelectorAll("#log .msg.assistant .body")].pop();
          return window.kgent.streamedHtml(body) === window.kgent.renderedHtml(text);
        }""",
        text,
    )
    assert same
    assert page.evaluate("window.kgent.streamTotals.failures") == 0
    parsed = page.evaluate("window.kgent.streamTotals.bytesParsed") - before
    assert parsed <= 8 * len(text), (parsed, len(text))
