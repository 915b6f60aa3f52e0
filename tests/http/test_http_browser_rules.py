"""Issue 25 in the web client, in Debian's Chromium against a real `kgent serve --http` (scripted provider): the
approval card shows the rule each "always" answer creates (one per simple command of a compound command) or why
none can be made; the proposed text is editable in the card and "Accept my version" lands it and tells the model;
the Rules dialog lists, adds and removes rules (GET/POST /api/rules, POST /api/rules/remove). The server's user
config directory is a temporary one (XDG_CONFIG_HOME): nothing touches the real user's rules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect
from test_http_browser import start_run

from chromium import NewContext
from kgent.testing.http_server import HttpServer, serving, write_script


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("rules")
    ws = root / "ws"
    ws.mkdir()
    env = {"KGENT_HTTP_HEARTBEAT": "0.5", "XDG_CONFIG_HOME": str(root / "config")}
    with serving(ws.resolve(), root / "state", env=env) as srv:
        yield srv


@pytest.fixture
def context(new_context: NewContext, server: HttpServer) -> BrowserContext:
    (server.workspace / "notes.txt").write_text("hello\nworld\n")
    (server.workspace / "sample.py").write_text("print(1)\n")
    return new_context()


def open_page(ctx: BrowserContext, server: HttpServer) -> Page:
    page = ctx.new_page()
    page.goto(server.page_url(""))
    page.wait_for_selector("#provider option", state="attached")
    expect(page.locator("#project")).not_to_have_text(
        "Project: …"
    )  # the placeholder: the server has not answered
    return page


def test_the_card_shows_each_always_answers_rules_and_why_none(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path,
        "compound",
        [
            [{"tool": "bash", "args": {"command": "python3 sample.py && touch done.txt"}}],
            [{"tool": "bash", "args": {"command": "for i in $(seq 1 3); do touch f$i; done"}}],
            [{"text": "Done."}],
        ],
    )
    page = open_page(context, server)
    start_run(page, f"scripted/{script}", "Run it")
    card = page.locator(".approval").first
    always = card.locator("details.more .rule-line[data-option-id=allow_always]")
    expect(always).to_have_count(2)  # one rule per simple command
    expect(always.locator("code.rule").first).to_contain_text("bash(")
    expect(always.first.locator(".rule-text")).not_to_be_empty()
    expect(card.locator(".no-rule")).to_have_count(0)
    # The buttons are whatever options arrived, each named with what it covers.
    expect(card.locator(".buttons button[data-option-id=allow_always]")).to_contain_text("this session")
    card.locator(".buttons button[data-option-id=reject_once]").click()
    second = page.locator(".approval").nth(1)
    expect(second.locator(".no-rule")).to_contain_text("No “always” answer: ")
    expect(second.locator(".rule-line")).to_have_count(0)
    expect(second.locator(".buttons button[data-option-id=allow_always]")).to_have_count(0)
    second.locator(".buttons button[data-option-id=reject_once]").click()
    expect(page.locator(".run-end")).to_contain_text("Run settled")


def test_the_proposal_is_edited_in_the_card_and_my_version_lands(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path,
        "edit",
        [
            [{"tool": "edit", "args": {"path": "notes.txt", "oldText": "hello", "newText": "HELLO"}}],
            [{"text": "Edited."}],
        ],
    )
    page = open_page(context, server)
    start_run(page, f"scripted/{script}", "Shout")
    card = page.locator(".approval")
    card.locator(".edit-proposal summary").click()
    text = card.locator(".edit-proposal textarea")
    expect(text).to_have_value("HELLO\nworld\n")
    text.fill("Hello, mine\nworld\n")
    card.locator("button.accept-mine").click()
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    assert (server.workspace / "notes.txt").read_text() == "Hello, mine\nworld\n"
    out = page.locator(".card.tool pre.output")
    expect(out).to_contain_text("-HELLO")  # the model is told what the user changed in its proposal
    expect(out).to_contain_text("+Hello, mine")
    expect(card.locator(".edit-proposal")).to_have_count(0)


def test_the_rules_dialog_lists_adds_and_removes(context: BrowserContext, server: HttpServer) -> None:
    page = open_page(context, server)
    page.click("#rules")
    dialog = page.locator("#rules-dialog")
    expect(dialog.locator(".rules-scope")).to_have_count(3)
    page.fill("#rule-input", "bash(npm test *)")
    page.click("#rule-add")
    project = dialog.locator(".rules-scope[data-scope=project]")
    item = project.locator('.rule-item[data-rule="bash(npm test *)"]')
    expect(item).to_have_count(1)
    expect(item.locator(".rule-text")).not_to_be_empty()
    assert (item.text_content() or "").startswith(
        "allow bash(npm test *) "
    )  # the badge and the rule apart, not "allowbash("
    expect(project.locator("h3")).to_have_text("Project rules (this project only)")  # not a file it is not in
    # The project is not trusted: the rule is kept in the user's own file for it, which the dialog names.
    mine = dialog.locator(".rules-file", has_text="Your project rules (they count): ")
    expect(mine).to_have_count(1)
    personal = Path(mine.inner_text().split(": ", 1)[1])
    assert "npm test *" in personal.read_text()
    assert not (server.workspace / ".kgent" / "config.toml").exists()
    page.select_option("#rule-decision", "deny")
    page.select_option("#rule-scope", "user")
    page.fill("#rule-input", "bash(git push *)")
    page.click("#rule-add")
    user = dialog.locator(".rules-scope[data-scope=user]")
    expect(user.locator('.rule-item.deny[data-rule="bash(git push *)"]')).to_have_count(1)
    page.fill("#rule-input", "bash(npm test")  # not a rule: the server says why
    page.click("#rule-add")
    expect(page.locator("#rules-error")).not_to_be_empty()
    item.locator("button.remove-rule").click()
    expect(item).to_have_count(0)
    assert "npm test" not in personal.read_text()
    user.locator('.rule-item[data-rule="bash(git push *)"] button.remove-rule').click()
    expect(user.locator(".rule-item")).to_have_count(0)
