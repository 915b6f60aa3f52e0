"""The web client, round 4 (issue "every front a daily driver"), in Debian's Chromium against a real `kgent serve
--http`: a long command's *Full output* opens all of it — while the run ends, after it ended and after a reload —
and the session search finds a session by what was answered in it, not only by its title."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Locator, expect
from test_http_browser import open_page, start_run

from chromium import NewContext
from kgent.testing.http_server import HttpServer, write_script

LINES = 10_000


@pytest.fixture
def context(new_context: NewContext, server: HttpServer) -> BrowserContext:
    return new_context()


def full_output(context: BrowserContext, card: Locator) -> str:
    """Click the card's Full output; the text of the tab it opens."""
    with context.expect_page() as opened:
        card.locator("button.full-output").click()
    tab = opened.value
    tab.wait_for_load_state()
    text: str = tab.locator("body").inner_text()
    tab.close()
    return text


def test_full_output_shows_a_long_commands_first_and_last_line(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    model = write_script(
        tmp_path,
        "long",
        [[{"tool": "bash", "args": {"command": f"seq 1 {LINES}"}, "id": "call-seq"}], [{"text": "Counted."}]],
    )
    page = open_page(context, server)
    start_run(page, f"scripted/{model}", "count to ten thousand", mode="full")
    card = page.locator(".card.tool[data-tool-call-id=call-seq]")
    expect(card).to_have_attribute("data-status", "completed")
    shown = card.locator("pre.output").inner_text()
    assert (
        not shown.startswith("1\n") and f"\n{LINES}\n" in shown
    )  # the card: the tail only, as the model saw
    lines = full_output(context, card).splitlines()
    assert lines[0] == "1" and lines[LINES - 1] == str(LINES) and len(lines) == LINES
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    assert full_output(context, card).splitlines()[-1] == str(LINES)  # after the run ended
    page.reload()
    card = page.locator(".card.tool[data-tool-call-id=call-seq]")
    expect(card.locator("button.full-output")).to_be_visible()  # the session's history offers it too
    lines = full_output(context, card).splitlines()
    assert lines[0] == "1" and lines[-1] == str(LINES)
    # a short command's card has no Full output: it shows all of it already
    quick = write_script(
        tmp_path,
        "quick",
        [[{"tool": "bash", "args": {"command": "echo hi"}, "id": "call-hi"}], [{"text": "Hi."}]],
    )
    page.click("#new-session")
    start_run(page, f"scripted/{quick}", "say hi", mode="full")
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    expect(page.locator(".card.tool[data-tool-call-id=call-hi] button.full-output")).to_have_count(0)


def test_a_sub_agents_long_command_offers_its_full_output_in_its_row(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    """A sub-agent's call is a row in its box under the task card; its full output is read from the sub-agent's run's
    session, as the parent's cards read theirs."""
    script = tmp_path / "sub-long.json"
    task = {
        "tool": "task",
        "id": "t-long",
        "args": {"description": "Counter", "prompt": "count", "tools": ["bash"]},
    }
    script.write_text(
        json.dumps(
            {
                "turns": [[task], [{"text": "The sub-agent counted."}]],
                "prompts": {
                    "count": [
                        [{"tool": "bash", "args": {"command": f"seq 1 {LINES}"}, "id": "sub-seq"}],
                        [{"text": "Counted."}],
                    ]
                },
            }
        )
    )
    page = open_page(context, server)
    start_run(page, f"scripted/{script}", "count with a sub-agent", mode="full")
    row = page.locator(".sub-run .sub-call[data-tool-call-id=sub-seq]")
    expect(row).to_have_attribute("data-status", "completed")
    lines = full_output(context, row).splitlines()
    assert lines[0] == "1" and lines[-1] == str(LINES) and len(lines) == LINES
    expect(page.locator(".run-end")).to_contain_text("Run settled")


def test_search_finds_a_session_by_its_answer(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    page = open_page(context, server)
    answered = write_script(tmp_path, "zebra", [[{"text": "The zebracorn lives in the hills."}]])
    start_run(page, f"scripted/{answered}", "where does it live?", mode="full")
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    found = page.evaluate("window.kgent.state.sessionId")
    page.click("#new-session")
    other = write_script(tmp_path, "other", [[{"text": "Nothing about animals."}]])
    start_run(page, f"scripted/{other}", "tell me something else", mode="full")
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    rows = page.locator("#sessions li")
    expect(rows.filter(has_text="where does it live?")).to_have_count(1)
    expect(rows.filter(has_text="tell me something else")).to_have_count(1)
    page.fill("#session-search", "ZEBRACORN hills")  # not in its title: in its answer
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-id", found)
    expect(rows.first).to_contain_text("where does it live?")
    page.fill("#session-search", "zebracorn nowhere")
    expect(rows).to_have_count(0)
    page.fill("#session-search", "")
    expect(rows.filter(has_text="tell me something else")).to_have_count(1)
    expect(rows.filter(has_text="where does it live?")).to_have_count(1)
