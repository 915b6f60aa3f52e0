"""The web client in a real browser: Python playwright driving Debian's Chromium (/usr/bin/chromium; never a
downloaded browser) against a real `kgent serve --http` on the scripted provider. One browser for the module; a fresh
context (fresh sessionStorage) per test (tests/http/conftest.py). KGENT_HTTP_SCREENSHOTS=DIR saves the docs'
screenshots there."""

from __future__ import annotations

import base64
import time
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from chromium import SHOTS, TIMEOUT, NewContext
from kgent.core.modes import MODE_DESCRIPTIONS
from kgent.http.security import CSP
from kgent.testing.http_server import HttpServer, write_script


@pytest.fixture
def context(new_context: NewContext, server: HttpServer) -> BrowserContext:
    (server.workspace / "sample.py").write_text("value = 1\nprint(value)\n")
    (server.workspace / "notes.txt").write_text("hello\n")
    return new_context()


def open_page(ctx: BrowserContext, server: HttpServer, fragment: str = "") -> Page:
    page = ctx.new_page()
    page.goto(server.page_url(fragment))
    expect(page.locator("#conn")).to_be_visible()
    page.wait_for_selector("#provider option", state="attached")
    expect(page.locator("#project")).not_to_have_text(
        "Project: …"
    )  # the placeholder: the server has not answered
    return page


def shot(page: Page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"))


def paste_image(page: Page, name: str, data: bytes) -> None:
    """Paste a PNG into the composer, as a person pasting a screenshot (a clipboard event with the file)."""
    page.evaluate(
        """([name, b64]) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], name, { type: "image/png" }));
  const box = document.getElementById("prompt");
  box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
}""",
        [name, base64.b64encode(data).decode()],
    )


def start_run(page: Page, model: str, prompt: str, mode: str = "ask") -> None:
    """Start a run from the composer; `model` is "provider/model" (the model typed into its field)."""
    provider, _, name = model.partition("/")
    page.select_option("#mode", mode)
    page.select_option("#provider", provider)
    page.fill("#model", name)
    page.fill("#prompt", prompt)
    page.click("#send")


def wait_for(page: Page, expression: str) -> None:
    """Poll `expression` in the page until it is truthy (a deadline, never a sleep-then-check). Not
    `wait_for_function`: it evaluates a string inside the page, which the page's CSP (no eval) refuses."""
    deadline = time.monotonic() + TIMEOUT / 1000
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        page.wait_for_timeout(20)


def seen_is_gap_free(page: Page) -> None:
    seen: list[str] = page.evaluate("window.kgent.state.seen")
    runs: dict[str, list[int]] = {}
    for item in seen:
        run_id, _, seq = item.rpartition(":")
        runs.setdefault(run_id, []).append(int(seq))
    for seqs in runs.values():
        assert seqs == list(range(len(seqs))), seqs


def test_run_and_approve_from_the_card_with_the_diff_visible(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    page = open_page(context, server)
    assert "token" not in page.url  # exchanged for the session cookie and taken out of the address bar
    start_run(page, "scripted/read-then-write", "Please rewrite notes.txt <b>now</b>")
    card = page.locator(".approval")
    expect(card.locator(".diff .add")).to_have_text("+rewritten")
    expect(card.locator(".diff .del")).to_have_text("-hello")
    # One primary action and Reject beside it; the lasting answers wait in a menu, their backticks shown as code.
    expect(card.locator(".buttons > button")).to_have_text(["Allow once", "Reject"])
    expect(card.locator(".buttons > button.primary")).to_have_text("Allow once")
    expect(card.locator("details.more button")).to_have_text(
        [
            "Allow writes to notes.txt this session",
            "Always allow writes to notes.txt in this project (kept in your settings)",
            "Reject writes to notes.txt this session",
            "Always reject writes to notes.txt in this project (kept in your settings)",
        ]
    )
    expect(card.locator("details.more button code").first).to_have_text("notes.txt")
    expect(card.locator("details.more button").first).not_to_be_visible()
    expect(card).to_be_focused()  # the card takes the focus when it appears: Enter allows, Escape rejects
    expect(page.locator(".msg.user")).to_contain_text("<b>now</b>")  # shown as text, not markup
    assert page.locator(".msg.user b").count() == 0
    card.locator("details.more summary").click()
    expect(card.locator(".rule-line[data-option-id=allow_always]")).to_contain_text("notes.txt")
    shot(page, "approval")
    card.locator("button[data-option-id=allow_once]").click()
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    expect(page.locator(".approval .decision")).to_have_text("allowed once")
    expect(page.locator(".run-end .changed li")).to_have_text(["notes.txt"])
    assert (server.workspace / "notes.txt").read_text() == "rewritten\n"
    page.locator(".run-end details.patch summary").click()
    page.evaluate("document.getElementById('log').scrollTop = 1e9")
    shot(page, "run-end")
    seen_is_gap_free(page)


def test_markdown_is_rendered_and_html_escaped(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    text = "## Plan\n\nHere is **bold**, `code` and <img src=x onerror=alert(1)>\n\n- one\n- two\n\n```py\nprint(1 < 2)\n```"
    model = write_script(tmp_path, "md", [[{"text": text}]])
    page = open_page(context, server)
    start_run(page, f"scripted/{model}", "markdown please")
    answer = page.locator(".msg.assistant").last
    expect(answer.locator("strong")).to_have_text("bold")
    expect(answer.locator("li")).to_have_text(["one", "two"])
    expect(answer.locator("pre code")).to_have_text("print(1 < 2)")
    expect(answer).to_contain_text("<img src=x onerror=alert(1)>")
    assert answer.locator("img").count() == 0


def test_reject_from_the_card(context: BrowserContext, server: HttpServer) -> None:
    page = open_page(context, server)
    start_run(page, "scripted/read-then-write", "rewrite notes.txt")
    page.locator(".approval button[data-option-id=reject_once]").click()
    expect(page.locator(".approval .decision")).to_have_text("rejected")
    expect(page.locator(".run-end")).to_be_visible()
    expect(page.locator('.card[data-status="failed"]')).to_contain_text("permission_denied")
    assert (server.workspace / "notes.txt").read_text() == "hello\n"


def test_stop_cancels_a_running_command(context: BrowserContext, server: HttpServer) -> None:
    page = open_page(context, server)
    start_run(page, "scripted/long-bash", "run the long command", mode="full")
    running = page.locator('.card[data-status="in_progress"]')
    expect(running.locator("pre.output")).to_contain_text("started")
    shot(page, "running-command")
    page.click("#stop")
    expect(page.locator(".run-end")).to_contain_text("Run cancelled")
    expect(page.locator(".card.tool").last).to_have_attribute("data-status", "failed")
    expect(page.locator("#send")).to_be_enabled()


def test_reload_mid_run_and_the_run_continues(context: BrowserContext, server: HttpServer) -> None:
    page = open_page(context, server)
    start_run(page, "scripted/read-then-write", "rewrite notes.txt")
    expect(page.locator(".approval .buttons button.opt")).to_have_count(6)
    page.reload()
    # Replayed: the open prompt is back, once.
    expect(page.locator(".approval .buttons button.opt")).to_have_count(6)
    expect(page.locator(".msg.user")).to_have_count(1)
    expect(page.locator(".card.tool")).to_have_count(2)
    page.locator(".approval button[data-option-id=allow_once]").click()
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    expect(page.locator(".msg.user")).to_have_count(1)
    seen_is_gap_free(page)
    # the next run in the same session continues after the history (rendered from the session, not replayed)
    start_run(page, "scripted/hello", "and now hello", mode="full")
    expect(page.locator(".run-end")).to_have_count(2)
    page.reload()
    expect(page.locator(".msg.user")).to_have_count(2)
    expect(page.locator(".approval")).to_have_count(0)  # history shows decisions, not open prompts
    expect(page.locator(".decision")).to_have_text(["allowed once"])


def test_two_tabs_on_one_run(context: BrowserContext, server: HttpServer) -> None:
    one = open_page(context, server)
    start_run(one, "scripted/read-then-write", "rewrite notes.txt")
    expect(one.locator(".approval .buttons button.opt")).to_have_count(6)
    session_id = one.evaluate("window.kgent.state.sessionId")
    two = open_page(context, server, f"#session={session_id}")
    expect(two.locator(".approval .buttons button.opt")).to_have_count(6)
    shot(two, "second-tab")
    two.locator(".approval button[data-option-id=allow_once]").click()
    for page in (one, two):
        expect(page.locator(".approval .decision")).to_have_text("allowed once")
        expect(page.locator(".run-end")).to_contain_text("Run settled")
        seen_is_gap_free(page)
    expect(one.locator(".approval button")).to_have_count(0)


def test_a_network_blip_loses_nothing(context: BrowserContext, server: HttpServer, tmp_path: Path) -> None:
    turn: list[dict[str, object]] = []
    for i in range(30):
        turn += [{"text": f"part{i} "}, {"sleep": 0.03}]
    model = write_script(tmp_path, "blip", [turn])
    page = open_page(context, server)
    start_run(page, f"scripted/{model}", "stream slowly", mode="full")
    for _ in range(4):
        wait_for(page, "window.kgent.state.seen.length > 0")
        page.evaluate("window.kgent.dropStream()")
        expect(page.locator("#conn")).to_have_attribute("data-state", "live")
    expect(page.locator(".run-end")).to_be_visible()
    seen_is_gap_free(page)
    text = page.locator(".msg.assistant").last.inner_text()
    assert text.split() == [f"part{i}" for i in range(30)]
    shot(page, "sessions")


def test_resume_fork_and_steer_from_the_page(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    page = open_page(context, server)
    start_run(page, "scripted/hello", "first prompt", mode="full")
    expect(page.locator(".run-end")).to_be_visible()
    page.click("#new-session")
    expect(page.locator(".msg")).to_have_count(0)
    session_id = page.evaluate("location.hash") or ""
    assert session_id == ""
    page.locator("#sessions li", has_text="first prompt").first.click()  # resume from the list
    expect(page.locator(".msg.user")).to_have_text(["Fork hereRestore checkpointfirst prompt"])
    page.locator(".msg.user .fork").click()  # continue from before the first prompt
    expect(page.locator(".notice").last).to_contain_text("Forked")
    turn: list[dict[str, object]] = []
    for i in range(20):
        turn += [{"text": f"step{i} "}, {"sleep": 0.1}]
    start_run(page, f"scripted/{write_script(tmp_path, 'paced', [turn])}", "second prompt", mode="full")
    expect(page.locator(".msg.assistant").last).to_contain_text("step0")
    page.fill("#prompt", "steer this way")
    page.click("#steer")
    expect(page.locator(".msg.user .src")).to_have_text(["steer"])
    expect(page.locator(".run-end")).to_be_visible()
    page.reload()
    users = page.locator(".msg.user")
    expect(users.first).to_contain_text("second prompt")
    expect(page.locator(".msg.user", has_text="first prompt")).to_have_count(0)  # forked away
    expect(page.locator(".msg.user", has_text="steer this way")).to_have_count(1)


def test_without_the_token_the_page_asks_for_it(context: BrowserContext, server: HttpServer) -> None:
    page = context.new_page()
    page.goto(f"{server.url}/")
    expect(page.locator("#token-dialog")).to_be_visible()
    page.fill("#token-input", "wrong")
    page.locator("#token-form button").click()
    expect(page.locator("#token-error")).to_be_visible()  # 401: said so, and asked again
    expect(page.locator("#token-dialog")).to_be_visible()
    expect(page.locator("#token-input")).to_have_value("")
    page.fill("#token-input", server.token)
    page.locator("#token-form button").click()
    expect(page.locator("#token-dialog")).to_be_hidden()
    expect(page.locator("#token-error")).to_be_hidden()
    expect(page.locator("#project")).to_have_text(
        "Project: choose…"
    )  # signed in: a fresh browser picks a project
    expect(page.locator("#project-dialog")).to_be_visible()
    assert page.evaluate("document.cookie") == ""  # HttpOnly: the page's scripts never see the session


def test_a_sub_agents_approval_is_asked_on_the_page(context: BrowserContext, server: HttpServer) -> None:
    page = open_page(context, server)
    start_run(page, "scripted/task", "What does sample.py print? Ask a sub-agent.")
    # its own stream is followed inside the task call's card: its calls, live, and its prompt, asked in its name
    task = page.locator(".card.tool").filter(has=page.locator(".sub-run"))
    expect(task.locator(".sub-run .sub-name")).to_have_text('sub-agent "Check sample.py"')
    card = task.locator(".sub-run .approval.sub-agent")
    expect(card).to_be_visible()
    expect(card.locator(".command")).to_have_text("python3 sample.py")
    expect(card.locator(".who")).to_have_text("Sub-agent “Check sample.py” wants to:")
    card.locator("button[data-option-id=allow_once]").click()
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    expect(card.locator(".decision")).not_to_be_empty()
    expect(task.locator(".sub-run")).to_have_attribute("data-status", "settled")
    expect(task.locator(".sub-run .sub-call[data-status=completed]")).to_have_count(
        2
    )  # its read, then the command
    expect(page.locator(".msg.assistant").last).to_contain_text("it prints 1")


def test_the_page_works_under_its_content_security_policy_and_shows_the_modes_texts(
    context: BrowserContext, server: HttpServer
) -> None:
    violations: list[str] = []
    page = context.new_page()
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    response = page.goto(server.page_url())
    assert response is not None and response.headers["content-security-policy"] == CSP
    assert response.headers["x-frame-options"] == "DENY"
    page.wait_for_selector("#mode option", state="attached")
    titles = page.eval_on_selector_all(
        "#mode option", "os => Object.fromEntries(os.map(o => [o.value, o.title]))"
    )
    assert titles == MODE_DESCRIPTIONS  # the picker shows the server's text for each mode
    start_run(page, "scripted/read-then-write", "rewrite notes.txt", mode="full")
    expect(page.locator(".run-end")).to_contain_text(
        "Run settled"
    )  # fetch, the event stream and rendering all ran
    page.evaluate(
        """() => { const s = document.createElement('script'); s.textContent = 'window.injected = 1';
                   document.body.append(s); }"""
    )
    assert page.evaluate("window.injected") is None  # an inline script is refused
    # the injected script is the only thing refused (once per policy: the header's and the page's own <meta>)
    assert violations and all("Executing inline script" in v for v in violations), violations
