"""A streamed answer costs the page linear work (issue 37): each delta re-renders only the Markdown block still open,
never the answer so far. Counted, not timed: page.js's `streamTotals` sums the bytes markdown-it parsed; for an answer
of P-byte paragraphs each streamed in k deltas, a render parses at most the block that just closed and the open one,
so the total stays under 2k times the answer (re-rendering the whole answer per delta grows with its square)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import BrowserContext, expect
from test_http_browser import context, open_page, start_run  # noqa: F401 - a fixture

from kgent.testing.http_server import HttpServer, write_script

PARAGRAPHS = 300
CHUNKS = 8  # deltas a paragraph


def test_a_long_answer_is_rendered_block_by_block(
    context: BrowserContext,  # noqa: F811 - the fixture
    server: HttpServer,
    tmp_path: Path,
) -> None:
    paragraphs = [
        f"Paragraph {i}: " + " ".join(f"word{i}x{j}" for j in range(16)) + ".\n\n" for i in range(PARAGRAPHS)
    ]
    paragraphs[7] = "```py\nprint('a code block')\n```\n\n"
    answer = "".join(paragraphs)
    turn = [step for p in paragraphs for step in ({"text": p, "chunks": CHUNKS}, {"sleep": 0.01})]
    model = write_script(tmp_path, "long", [turn])
    page = open_page(context, server)
    before = page.evaluate("window.kgent.streamTotals.bytesParsed")
    start_run(page, f"scripted/{model}", "a long answer", mode="full")
    expect(page.locator(".run-end")).to_be_visible()
    body = page.locator(".msg.assistant .body").last
    expect(body.locator("p")).to_have_count(PARAGRAPHS - 1)
    expect(body.locator("p").last).to_have_text(paragraphs[-1].strip())
    expect(body.locator(".code-block pre code")).to_have_text("print('a code block')")  # with its Copy button
    parsed = page.evaluate("window.kgent.streamTotals.bytesParsed") - before
    assert parsed <= 2 * CHUNKS * len(answer), (parsed, len(answer))
    print(f"parsed {parsed} bytes for a {len(answer)}-byte answer ({parsed / len(answer):.2f}x)")
    # what closed was rendered once and kept (a box per frame that closed some); the answer's end closed the last one
    expect(body.locator(".md-open > *")).to_have_count(0)
    assert body.locator(".md-block").count() >= 5


def test_copy_buttons_copy_the_code_and_the_answer(
    context: BrowserContext,  # noqa: F811 - the fixture
    server: HttpServer,
    tmp_path: Path,
) -> None:
    text = "Run this:\n\n```sh\necho hi\n```\n\nDone."
    model = write_script(tmp_path, "copy", [[{"text": text}]])
    page = open_page(context, server)
    start_run(page, f"scripted/{model}", "show me code", mode="full")
    answer = page.locator(".msg.assistant").last
    expect(answer).to_contain_text("Done.")
    answer.locator(".code-block button.copy").click()
    assert page.evaluate("window.kgent.copied.last") == "echo hi\n"
    expect(answer.locator(".code-block button.copy")).to_have_attribute("data-copied", "yes")
    answer.locator(":scope > button.copy").click()
    assert page.evaluate("window.kgent.copied.last") == text
    expect(answer).to_have_text(
        "Run this:\necho hi\nDone.", use_inner_text=True
    )  # no button label in the text
