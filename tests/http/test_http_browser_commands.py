"""The web client's slash commands that are no prompt, in Debian's Chromium against a real `kgent serve --http`:
`/help`, `/cost` and `/mode` answered in the transcript (the mode in its picker), `/clear` starting afresh, `/rewind`
opening the rewind flow; and the session head's Export menu saving the transcript as Markdown, HTML or JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect
from test_http_browser import open_page

from chromium import NewContext
from kgent.testing.http_server import HttpServer, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("commands")
    ws = (root / "ws").resolve()
    ws.mkdir()
    with serving(ws, root / "state", env={"KGENT_CONFIG_DIR": str(root / "config")}) as srv:
        yield srv


@pytest.fixture
def context(new_context: NewContext) -> BrowserContext:  # noqa: F811 - the imported fixture
    return new_context(accept_downloads=True)


def send(page: Page, text: str) -> None:
    page.fill("#prompt", text)
    page.click("#send")


def run(page: Page, prompt: str) -> str:
    """A prompt run to its end on the scripted provider's `hello`; returns the session's id."""
    page.select_option("#provider", "scripted")
    page.fill("#model", "hello")
    ends = page.locator(".run-end").count()
    send(page, prompt)
    expect(page.locator(".run-end")).to_have_count(ends + 1)
    expect(page.locator(".run-end").last).to_contain_text("Run settled")
    session_id: str = page.evaluate("window.kgent.state.sessionId")
    return session_id


def test_help_is_answered_in_the_transcript_and_starts_no_run(
    context: BrowserContext, server: HttpServer
) -> None:
    page = open_page(context, server)
    send(page, "/help")
    answer = page.locator(".command-answer")
    expect(answer.locator(".command")).to_have_text("/help")
    expect(answer.locator(".text")).to_contain_text("/cost — Show the tokens this session has used")
    lines = answer.locator(".text").inner_text().split("\n")  # as rendered: one line per command
    assert {"/clear", "/cost", "/help", "/rewind"} <= {x.split(" ")[0] for x in lines}, lines
    expect(page.locator("#prompt")).to_have_value("")
    assert page.evaluate("[window.kgent.state.runId, window.kgent.state.sessionId]") == [None, None]
    expect(page.locator(".run-end")).to_have_count(0)
    expect(page.locator(".msg")).to_have_count(0)  # not a message of the conversation
    expect(page.locator(".notice")).to_have_count(0)  # no error


def test_mode_sets_the_picker_and_the_next_run_uses_it(context: BrowserContext, server: HttpServer) -> None:
    page = open_page(context, server)
    page.select_option("#mode", "ask")
    send(page, "/mode bogus")
    expect(page.locator(".notice").last).to_contain_text("/mode failed: unknown mode 'bogus'")
    expect(page.locator("#prompt")).to_have_value("/mode bogus")  # kept on an error
    expect(page.locator("#mode")).to_have_value("ask")
    send(page, "/mode plan")
    expect(page.locator(".command-answer .text")).to_contain_text(
        "Mode for the next run (a new session): plan"
    )
    expect(page.locator("#mode")).to_have_value("plan")
    expect(page.locator("#prompt")).to_have_value("")
    run(page, "What is here?")
    expect(page.locator(".notice", has_text="· plan · scripted/hello")).to_have_count(1)  # run_start's mode


def test_a_prompt_command_runs_and_cost_follows_it(context: BrowserContext, server: HttpServer) -> None:
    page = open_page(context, server)
    run(page, "/init keep it short")  # typed whole, the menu never listed: the server's answer says `prompt`
    expect(page.locator(".msg.user")).to_contain_text("AGENTS.md")  # the expansion the model was sent
    send(page, "/cost")
    expect(page.locator(".command-answer .command")).to_have_text("/cost")
    expect(page.locator(".command-answer .text")).to_contain_text("This session so far:")


def test_clear_starts_a_new_session_and_keeps_the_old_one(
    context: BrowserContext, server: HttpServer
) -> None:
    page = open_page(context, server)
    first = run(page, "the first session")
    send(page, "/clear")
    expect(page.locator("#session-title")).to_have_text("New session")
    expect(page.locator(".notice")).to_have_text(
        ["Your next prompt starts a new session (this one stays in History)."]
    )
    expect(page.locator(".msg")).to_have_count(0)
    expect(page.locator("#prompt")).to_have_value("")
    assert page.evaluate("window.kgent.state.sessionId") is None
    second = run(page, "the second session")
    assert second != first
    expect(page.locator(f'#sessions li[data-id="{first}"]')).to_contain_text("the first session")
    expect(page.locator(f'#sessions li[data-id="{second}"]')).to_be_visible()


def test_rewind_opens_the_rewind_flow(context: BrowserContext, server: HttpServer) -> None:
    page = open_page(context, server)
    send(page, "/rewind")
    expect(page.locator(".notice")).to_have_text(["Nothing to rewind: no session is open."])
    expect(page.locator("#prompt")).to_have_value("")
    run(page, "go back to here")
    send(page, "/rewind")
    choice = page.locator(".rewind-picker button", has_text="go back to here")
    expect(choice).to_be_focused()  # the latest prompt first, ready for Enter
    page.keyboard.press("Enter")
    # The dry run's plan, asked first in the page's dialog, names the message; Escape leaves everything as it was.
    expect(page.locator("#rewind-question")).to_contain_text("before “go back to here”")
    page.keyboard.press("Escape")
    expect(page.locator(".notice").last).to_have_text("Checkpoint not restored: nothing changed.")
    expect(page.locator(".rewind-picker")).to_have_count(0)


def test_export_downloads_the_transcript(context: BrowserContext, server: HttpServer) -> None:
    page = open_page(context, server)
    export = page.locator("#export")
    expect(export).to_be_hidden()  # no session yet
    session_id = run(page, "export me please")
    expect(export).to_be_visible()
    page.get_by_label("Export this session (Markdown, HTML or JSON)").click()
    with page.expect_download() as markdown:
        page.get_by_role("button", name="Export as Markdown").click()
    assert markdown.value.suggested_filename == f"kgent-{session_id}.md"
    assert "export me please" in Path(markdown.value.path()).read_text()
    expect(export).not_to_have_attribute("open", "")  # the menu closes once a format is picked
    # By keyboard: the summary opens the menu, Tab reaches the formats, Escape closes it again.
    export.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(export).to_have_attribute("open", "")
    page.keyboard.press("Escape")
    expect(export).not_to_have_attribute("open", "")
    expect(export.locator("summary")).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Export as HTML")).to_be_focused()
    with page.expect_download() as html:
        page.keyboard.press("Enter")
    assert html.value.suggested_filename == f"kgent-{session_id}.html"
    text = Path(html.value.path()).read_text()
    assert "<html" in text and "export me please" in text
    page.get_by_label("Export this session (Markdown, HTML or JSON)").click()
    with page.expect_download() as as_json:
        page.get_by_role("button", name="Export as JSON").click()
    assert as_json.value.suggested_filename == f"kgent-{session_id}.json"
    assert "export me please" in json.dumps(json.loads(Path(as_json.value.path()).read_text()))
    page.click("#new-session")
    expect(export).to_be_hidden()
