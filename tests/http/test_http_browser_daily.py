"""The web client as a person uses it every day (issue 28), in Debian's Chromium against a real `kgent serve --http`
whose configured provider is OpenAI-compatible, pointed at kgent.testing's local model server. The scripted provider
stays selectable for the runs that need a script. One server and one browser for the module; a fresh context (fresh
cookies and localStorage) per test."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import APIResponse, Browser, BrowserContext, Locator, Page, Route, expect
from test_http_browser import shot, start_run, wait_for

from chromium import ARGS, CHROMIUM, TIMEOUT, NewContext
from kgent.testing.http_server import HttpServer, serving, write_script
from kgent.testing.model_server import ModelServer

CONFIGURED = "configured-model-7"
A = "alpha\nbeta\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\n"


@pytest.fixture(scope="module")
def models() -> Iterator[ModelServer]:
    with ModelServer([[{"text": "Answered by the configured model."}]], model=CONFIGURED) as srv:
        yield srv


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, models: ModelServer) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("daily")
    ws = root / "src"
    (ws / "proj").mkdir(parents=True)
    (ws / "other").mkdir()
    env = {
        "KGENT_PROVIDER": "openai",
        "KGENT_MODEL": CONFIGURED,
        "KGENT_BASE_URL": models.openai_base_url,
        "KGENT_API_KEY": "sk-local-test",
        "KGENT_HTTP_HEARTBEAT": "0.5",
    }
    with serving(ws.resolve(), root / "state", env=env) as srv:
        yield srv
    assert "sk-local-test" not in "".join(srv.output)  # the key reaches no line the server printed


@pytest.fixture
def context(new_context: NewContext, server: HttpServer) -> BrowserContext:
    return new_context(permissions=["notifications"])


def open_page(
    ctx: BrowserContext, server: HttpServer, fragment: str = "", *, token: bool = True, project: bool = True
) -> Page:
    page = ctx.new_page()
    page.goto(server.page_url(fragment, project=project) if token else f"{server.url}/{fragment}")
    page.wait_for_selector("#provider option", state="attached")
    expect(page.locator("#project")).not_to_have_text(
        "Project: …"
    )  # the placeholder: the server has not answered
    return page


def pick_project(page: Page, *names: str, opened: bool = False) -> None:
    if not opened:
        page.click("#project")
    dialog = page.locator("#project-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#project-dirs button")).not_to_have_count(0)
    shot(page, "project-picker")
    for name in names:
        dialog.locator("#project-dirs button", has_text=f"{name}/").click()
        expect(dialog.locator("#project-path")).to_contain_text(f"/{name}")
    dialog.locator("#project-use").click()
    expect(page.locator("#project")).to_have_text(f"Project: {names[-1]}")


def session_row(page: Page, title: str) -> tuple[str, Locator]:
    """The id of the one session listed with `title`, and its row by id (a title can change; the id cannot)."""
    item = page.locator("#sessions li", has_text=title)
    expect(item).to_have_count(1)
    sid = item.get_attribute("data-id")
    assert sid is not None
    return sid, page.locator(f'#sessions li[data-id="{sid}"]')


def slow_answer(tmp_path: Path, name: str) -> str:
    """A scripted model answering 300 words a tenth of a second apart (~30 s: a run long enough to queue into)."""
    turn: list[dict[str, object]] = []
    for i in range(300):
        turn += [{"text": f"w{i} "}, {"sleep": 0.1}]
    return write_script(tmp_path, name, [turn])


def test_the_configured_model_and_a_project_on_first_use(
    context: BrowserContext, server: HttpServer, models: ModelServer
) -> None:
    models.reset()
    page = open_page(context, server, project=False)
    expect(page.locator("#provider")).to_have_value(
        "openai"
    )  # the server's configuration, not a built-in default
    expect(page.locator("#model")).to_have_value(CONFIGURED)
    # a fresh browser is not put in the root: it asks which project, and the picker stays until one is chosen
    expect(page.locator("#project")).to_have_text("Project: choose…")
    dialog = page.locator("#project-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#project-path")).to_have_text(str(server.workspace))
    expect(dialog.locator("#project-cancel")).to_be_hidden()
    page.keyboard.press("Escape")
    expect(dialog).to_be_visible()
    pick_project(page, "proj", opened=True)
    shot(page, "first-use")
    page.fill("#prompt", "hello, configured model")
    page.click("#send")
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    expect(page.locator(".msg.assistant").last).to_have_text("Answered by the configured model.")
    sent = [r.body for r in models.requests if r.path.endswith("/chat/completions")]
    assert [b["model"] for b in sent] == [CONFIGURED]
    session_id = page.evaluate("window.kgent.state.sessionId")
    with server.client() as c:
        assert c.get(f"/api/sessions/{session_id}").json()["workspace"] == str(server.workspace / "proj")
    # any model id can be typed; what was chosen is remembered in this browser
    page.click("#new-session")
    page.fill("#model", "typed-model-id")
    page.dispatch_event("#model", "change")
    page.select_option("#mode", "full")
    page.fill("#prompt", "and with a typed model")
    page.click("#send")
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    assert models.requests[-1].body["model"] == "typed-model-id"
    again = open_page(context, server, project=False)
    expect(again.locator("#project-dialog")).to_be_hidden()  # the choice was remembered
    expect(again.locator("#model")).to_have_value("typed-model-id")
    expect(again.locator("#mode")).to_have_value("full")
    expect(again.locator("#project")).to_have_text("Project: proj")
    # a browser that last used another server configuration starts from this server's configured model
    again.evaluate(
        """localStorage.setItem('kgent.prefs', JSON.stringify({...JSON.parse(localStorage.getItem('kgent.prefs')),
             configured: 'anthropic/claude-x', provider: 'anthropic', models: {anthropic: 'claude-x'}}))"""
    )
    again.reload()
    expect(again.locator("#provider")).to_have_value("openai")
    expect(again.locator("#model")).to_have_value(CONFIGURED)
    expect(again.locator("#mode")).to_have_value("full")
    again.click("#project")
    expect(again.locator("#project-recent button")).to_have_text([str(server.workspace / "proj")])
    expect(again.locator("#project-cancel")).to_be_visible()
    # the root itself is a project only when chosen, with "Use this directory" there
    again.locator("#project-up").click()
    expect(again.locator("#project-path")).to_have_text(str(server.workspace))
    again.locator("#project-use").click()
    expect(again.locator("#project")).to_have_text(f"Project: {server.workspace.name}")


def test_a_second_tab_needs_no_token_and_sign_out_revokes(
    context: BrowserContext, server: HttpServer
) -> None:
    first = open_page(context, server)
    assert "token" not in first.url
    second = open_page(context, server, token=False)  # a new tab, or a bookmark: the cookie signs it in
    expect(second.locator("#token-dialog")).to_be_hidden()
    expect(second.locator("#conn")).to_be_visible()
    second.click("#sign-out")
    expect(second.locator("#token-dialog")).to_be_visible()
    third = context.new_page()
    third.goto(f"{server.url}/")
    expect(third.locator("#token-dialog")).to_be_visible()  # signed out everywhere in this browser


def test_a_prompt_sent_before_the_project_is_known_waits_for_it(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    """CI saw it: Ctrl+Enter before GET /api/workspaces answered sent no workspace ("'workspace' is required").
    The send now waits for the project; the text stays in the box until then."""
    model = write_script(tmp_path, "quick", [[{"text": "Answered after the project was known."}]])
    page = context.new_page()
    held: list[Route] = []
    page.route("**/api/workspaces", lambda route: held.append(route))
    page.goto(server.page_url(""))
    page.wait_for_selector("#provider option", state="attached")
    deadline = time.monotonic() + TIMEOUT / 1000
    while not held:
        assert time.monotonic() < deadline
        page.wait_for_timeout(20)
    expect(page.locator("#project")).to_have_text("Project: …")
    start_run(page, f"scripted/{model}", "sent early", mode="full")
    page.wait_for_timeout(300)  # the send is waiting: nothing started, nothing lost
    expect(page.locator("#prompt")).to_have_value("sent early")
    expect(page.locator(".notice", has_text="could not")).to_have_count(0)
    held[0].continue_()
    expect(page.locator(".msg.assistant").last).to_contain_text("Answered after the project was known.")
    expect(page.locator("#prompt")).to_have_value("")
    expect(page.locator(".notice", has_text="could not")).to_have_count(0)
    assert "/src" in page.evaluate("document.getElementById('project').title")


def test_the_context_gauge_shows_how_full_the_context_is(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    """After each model call the session head says how full the model's context was (the `usage` event's
    `context`), warning as it nears the window; a new session starts without one."""
    script = [[{"text": "Small."}, {"usage": {"input": 2_000, "output": 100}}]]
    small = write_script(tmp_path, "small", script)
    big = write_script(tmp_path, "big", [[{"text": "Big."}, {"usage": {"input": 30_000, "output": 200}}]])
    page = open_page(context, server)
    gauge = page.locator("#context")
    expect(gauge).to_be_hidden()
    start_run(page, f"scripted/{small}", "a small one", mode="full")
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    expect(gauge).to_have_text("context 2.1k of 33k tokens (6%)")  # the scripted provider's window: 32768
    expect(gauge).not_to_have_class(re.compile("near-full"))
    page.fill("#model", big)
    page.fill("#prompt", "a big one")
    page.click("#send")
    expect(page.locator(".run-end")).to_have_count(2)
    expect(gauge).to_have_text("context 30k of 33k tokens (92%)")
    expect(gauge).to_have_class(re.compile("near-full"))
    shot(page, "context-gauge")
    page.click("#new-session")
    expect(gauge).to_be_hidden()


def test_text_typed_during_a_request_stays_and_the_queue_is_editable(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    model = slow_answer(tmp_path, "long")
    page = open_page(context, server)
    held: list[Route] = []
    page.route("**/followUp", lambda route: held.append(route))
    start_run(page, f"scripted/{model}", "a long answer please", mode="full")
    expect(page.locator(".msg.assistant").last).to_contain_text("w0")
    page.fill("#prompt", "first follow-up")
    page.click("#follow-up")
    deadline = time.monotonic() + TIMEOUT / 1000
    while not held:  # the request is in flight, held by the route
        assert time.monotonic() < deadline
        page.wait_for_timeout(20)
    page.fill("#prompt", "still typing")  # typed while the request is in flight
    held[0].continue_()
    expect(page.locator("#queue .text")).to_have_text(["first follow-up"])
    expect(page.locator("#prompt")).to_have_value("still typing")
    page.unroute("**/followUp")
    page.fill("#prompt", "second follow-up")
    page.click("#follow-up")
    expect(page.locator("#queue .text")).to_have_text(["first follow-up", "second follow-up"])
    expect(page.locator("#prompt")).to_have_value("")
    queue = page.locator("#queue li")
    queue.nth(0).locator("button.edit").click()
    page.fill("#queue .edit-text", "edited follow-up")
    page.press("#queue .edit-text", "Enter")
    expect(page.locator("#queue .text")).to_have_text(["edited follow-up", "second follow-up"])
    shot(page, "queue")
    page.locator("#queue li", has_text="second follow-up").locator("button.remove").click()
    expect(page.locator("#queue .text")).to_have_text(["edited follow-up"])
    page.click("#stop")
    expect(page.locator(".run-end")).to_contain_text("Run cancelled")
    expect(page.locator(".queue-dropped")).to_contain_text(
        "1 queued message(s) were not sent (the run was stopped)"
    )
    expect(page.locator("#queue")).to_be_hidden()
    expect(page.locator("#prompt")).to_have_value("edited follow-up")


def test_review_hunks_with_a_conflict(context: BrowserContext, server: HttpServer) -> None:
    proj = server.workspace / "proj"
    (proj / "a.txt").write_text(A)
    (proj / "b.txt").write_text(A.replace("beta", "bravo"))
    page = open_page(context, server)
    pick_project(page, "proj")
    start_run(page, "scripted/review-edits", "edit both files", mode="full")
    end = page.locator(".run-end")
    expect(end.locator(".changed button")).to_have_text(["a.txt", "b.txt"])
    end.locator(".changed button", has_text="b.txt").click()  # a changed file opens its diff
    review = page.locator("#review")
    expect(review.locator(".review-file")).to_have_count(2)
    a = review.locator('.review-file[data-path="a.txt"]')
    expect(a.locator(".review-hunk")).to_have_count(2)
    expect(a.locator(".review-hunk .add")).to_have_text(["+BETA", "+HOTEL"])
    a.locator(".review-hunk").nth(0).locator("button.accept").click()
    expect(a.locator(".review-hunk").nth(0)).to_have_attribute("data-status", "accepted")
    a.locator(".review-hunk").nth(1).locator("button.reject").click()
    expect(a.locator(".review-hunk").nth(1)).to_have_attribute("data-status", "rejected")
    assert (proj / "a.txt").read_text() == A.replace("beta", "BETA")
    # someone edits b.txt's changed line meanwhile: rejecting that hunk is a conflict, shown on it
    (proj / "b.txt").write_text((proj / "b.txt").read_text().replace("CHARLIE", "charlie, by hand"))
    b = review.locator('.review-file[data-path="b.txt"]')
    b.locator("button.reject-file").click()
    charlie = b.locator(".review-hunk").nth(0)
    expect(charlie.locator(".outcome.conflict")).to_contain_text("conflict: the lines changed since")
    expect(charlie).to_have_attribute("data-status", "pending")
    expect(b.locator(".review-hunk").nth(1)).to_have_attribute("data-status", "rejected")
    shot(page, "review")
    assert "INDIA" not in (proj / "b.txt").read_text()
    assert "charlie, by hand" in (proj / "b.txt").read_text()
    # resumed later: the run's summary with its changed files, and the review with the decisions so far
    page.reload()
    resumed = page.locator(".run-end.resumed")
    expect(resumed).to_contain_text("changed 2 file(s)")
    resumed.locator("button.review-run-button").click()
    expect(review.locator('.review-file[data-path="a.txt"] .review-hunk').nth(0)).to_have_attribute(
        "data-status", "accepted"
    )
    expect(review.locator(".review-hunk[data-status=rejected]")).to_have_count(2)


def test_fork_keeps_the_old_branch_one_click_away(context: BrowserContext, server: HttpServer) -> None:
    page = open_page(context, server)
    start_run(page, "scripted/hello", "first prompt", mode="full")
    expect(page.locator(".run-end")).to_have_count(1)
    start_run(page, "scripted/hello", "second prompt", mode="full")
    expect(page.locator(".run-end")).to_have_count(2)
    page.locator(".msg.user", has_text="second prompt").locator(".fork").click()
    expect(page.locator(".msg.user")).to_have_count(1)
    start_run(page, "scripted/hello", "other prompt", mode="full")
    expect(page.locator(".run-end")).to_have_count(1)
    branches = page.locator("#branches .branch")
    expect(branches).to_have_count(2)
    expect(page.locator("#branches .branch.current")).to_contain_text("other prompt")
    shot(page, "branches")
    page.locator("#branches .branch", has_text="second prompt").click()
    expect(page.locator(".msg.user")).to_have_text(
        ["Fork hereRestore checkpointfirst prompt", "Fork hereRestore checkpointsecond prompt"]
    )
    expect(page.locator("#branches .branch.current")).to_contain_text("second prompt")
    page.locator("#branches .branch", has_text="other prompt").click()
    expect(page.locator(".msg.user", has_text="other prompt")).to_have_count(1)
    expect(page.locator(".msg.user", has_text="second prompt")).to_have_count(0)
    # one entry per conversation in the list, found by search
    page.fill("#session-search", "first prompt")
    expect(page.locator("#sessions li")).to_have_count(1)


def test_tables_highlighted_code_and_no_raw_html(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    text = (
        "| tool | kind |\n|---|---|\n| read | read |\n| bash | execute |\n\n"
        "~~gone~~ and <img src=x onerror=alert(1)>\n\n```python\ndef f(x):\n    return x < 2\n```"
    )
    model = write_script(tmp_path, "md", [[{"text": text}]])
    page = open_page(context, server)
    start_run(page, f"scripted/{model}", "render please", mode="full")
    answer = page.locator(".msg.assistant").last
    expect(answer.locator("table th")).to_have_text(["tool", "kind"])
    expect(answer.locator("table td")).to_have_text(["read", "read", "bash", "execute"])
    expect(answer.locator("s")).to_have_text("gone")
    expect(answer.locator("pre code.hljs .hljs-keyword").first).to_have_text("def")
    expect(answer.locator("pre code")).to_have_text("def f(x):\n    return x < 2")
    expect(answer).to_contain_text("<img src=x onerror=alert(1)>")
    assert answer.locator("img").count() == 0
    shot(page, "rendering")


def test_the_csp_blocks_an_injected_inline_script(context: BrowserContext, server: HttpServer) -> None:
    page = open_page(context, server)
    violation = page.evaluate(
        """() => new Promise((resolve) => {
             document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), {once: true});
             const s = document.createElement('script');
             s.textContent = 'window.injected = true';
             document.body.append(s);
           })"""
    )
    assert violation == "script-src-elem"
    assert page.evaluate("window.injected") is None
    csp = page.evaluate("document.querySelector('meta[http-equiv=Content-Security-Policy]').content")
    assert "script-src 'self'" in csp and "default-src 'none'" in csp


def test_an_approval_waits_in_the_title_favicon_and_a_notification(
    context: BrowserContext, server: HttpServer
) -> None:
    (server.workspace / "notes.txt").write_text("hello\n")
    page = open_page(context, server)
    start_run(page, "scripted/read-then-write", "rewrite notes.txt", mode="ask")
    expect(page.locator(".approval .buttons button.opt")).to_have_count(6)
    expect(page).to_have_title("(1) waiting for you · Kgent")
    expect(page.locator("#favicon")).to_have_attribute("href", "/static/icon-waiting.svg")
    wait_for(page, "window.kgent.notifications.length === 1")
    page.locator(".approval button[data-option-id=allow_once]").click()
    expect(page).to_have_title("Kgent")
    expect(page.locator("#favicon")).to_have_attribute("href", "/static/icon.svg")


def test_the_page_is_an_installable_web_app(browser: Browser, server: HttpServer, tmp_path: Path) -> None:
    # a profile on disk: Chromium never offers to install from an incognito context (playwright's new_context)
    ctx = browser.browser_type.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=CHROMIUM, args=ARGS
    )
    try:
        ctx.set_default_timeout(TIMEOUT)
        page = open_page(ctx, server)
        cdp = ctx.new_cdp_session(page)
        errors = cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
        assert errors == []
        manifest = cdp.send("Page.getAppManifest")
        assert manifest["errors"] == [] and '"display": "standalone"' in manifest["data"]
    finally:
        ctx.close()


def test_a_run_that_ends_before_its_request_answers_leaves_the_page_idle(
    context: BrowserContext, server: HttpServer
) -> None:
    page = open_page(context, server)
    start_run(page, "scripted/hello", "first", mode="full")
    expect(page.locator(".run-end")).to_have_count(1)
    held: list[tuple[Route, APIResponse]] = []
    page.route("**/api/runs", lambda route: held.append((route, route.fetch())))
    start_run(
        page, "scripted/hello", "second", mode="full"
    )  # the session's stream is open: events come first
    expect(page.locator(".run-end")).to_have_count(2)
    assert len(held) == 1
    route, response = held[0]
    route.fulfill(response=response)  # only now does the page learn the run's id
    page.unroute("**/api/runs")
    expect(page.locator("#send")).to_be_enabled()
    expect(page.locator("#stop")).to_be_disabled()
    assert page.evaluate("window.kgent.state.runId") is None


def test_a_session_renamed_in_place_and_deleted_after_asking(
    context: BrowserContext, server: HttpServer
) -> None:
    page = open_page(context, server)
    start_run(page, "scripted/hello", "a session to keep", mode="full")
    expect(page.locator(".run-end")).to_have_count(1)
    page.click("#new-session")
    start_run(page, "scripted/hello", "a session to rename", mode="full")
    expect(page.locator(".run-end")).to_have_count(1)
    sid, mine = session_row(page, "a session to rename")
    # Esc cancels …
    mine.locator("button.rename").click()
    mine.locator("input.rename-input").fill("not this")
    mine.locator("input.rename-input").press("Escape")
    expect(mine.locator(".title")).to_have_text("a session to rename")
    # … Enter saves, and the title survives a reload (it is the server's)
    mine.locator(".title").dblclick()
    mine.locator("input.rename-input").fill("Renamed by hand")
    mine.locator("input.rename-input").press("Enter")
    expect(mine.locator(".title")).to_have_text("Renamed by hand")
    expect(page.locator("#session-title")).to_contain_text("Renamed by hand")
    page.reload()
    expect(mine.locator(".title")).to_have_text("Renamed by hand")
    shot(page, "session-renamed")
    # Delete asks: Cancel keeps the session …
    mine.locator("button.delete").click()
    dialog = page.locator("#delete-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#delete-name")).to_have_text("Renamed by hand")
    dialog.locator("#delete-cancel").click()
    expect(dialog).to_be_hidden()
    expect(mine).to_have_count(1)
    # … Delete removes it, from the list and from the server
    mine.locator("button.delete").click()
    dialog.locator("#delete-confirm").click()
    expect(mine).to_have_count(0)
    page.reload()
    expect(page.locator("#sessions li", has_text="a session to keep")).to_have_count(1)  # the list is back
    expect(mine).to_have_count(0)
    assert page.request.get(f"{server.url}/api/sessions/{sid}").status == 404


def test_a_listing_that_arrives_during_a_rename_waits_for_it(
    context: BrowserContext, server: HttpServer
) -> None:
    """A run's end (or a search) asks for the list while the person renames a session: the row is not drawn again
    under their hands; the listing is drawn when the rename ends."""
    page = open_page(context, server)
    start_run(page, "scripted/hello", "a title to edit", mode="full")
    expect(page.locator(".run-end")).to_have_count(1)
    sid, mine = session_row(page, "a title to edit")
    url = f"{server.url}/api/sessions/{sid}"

    def listing_during_a_rename(elsewhere: str) -> None:
        """Renamed by another client; a listing asked for and held; the rename opened; the listing let through."""
        assert page.request.patch(url, data={"title": elsewhere}, headers={"X-Kgent-Client": "web"}).ok
        held: list[Route] = []
        page.route("**/api/sessions?*", lambda route: held.append(route))
        page.click("#refresh-sessions")
        deadline = time.monotonic() + TIMEOUT / 1000
        while not held:
            assert time.monotonic() < deadline, "the page asked for no listing"
            page.wait_for_timeout(20)
        mine.locator("button.rename").click()
        mine.locator("input.rename-input").fill("typed while")
        held[0].continue_()
        page.unroute("**/api/sessions?*")
        wait_for(page, f"window.kgent.state.sessions.some((s) => s.title === {elsewhere!r})")
        expect(mine.locator("input.rename-input")).to_be_focused()
        expect(mine.locator("input.rename-input")).to_have_value("typed while")

    listing_during_a_rename("renamed elsewhere")
    mine.locator("input.rename-input").press("End")
    mine.locator("input.rename-input").press_sequentially(" the list came")
    mine.locator("input.rename-input").press("Enter")
    expect(mine.locator(".title")).to_have_text("typed while the list came")
    # Esc: the listing held back is drawn then
    listing_during_a_rename("renamed elsewhere again")
    mine.locator("input.rename-input").press("Escape")
    expect(mine.locator(".title")).to_have_text("renamed elsewhere again")


def test_a_queue_that_changes_while_a_message_is_edited_keeps_the_edit(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    """Another tab queues a follow-up while the person edits one: the edit stays open with its text and focus, and
    saving it changes that message in the queue as it is now."""
    model = slow_answer(tmp_path, "long-edit")
    page = open_page(context, server)
    start_run(page, f"scripted/{model}", "a long answer please", mode="full")
    expect(page.locator(".msg.assistant").last).to_contain_text("w0")
    for text in ("first follow-up", "second follow-up"):
        page.fill("#prompt", text)
        page.click("#follow-up")
        expect(page.locator("#queue .text").last).to_have_text(text)
    page.locator("#queue li", has_text="second follow-up").locator("button.edit").click()
    page.fill("#queue .edit-text", "second, edited")
    run_id = page.evaluate("window.kgent.state.runId")
    queued = page.request.post(
        f"{server.url}/api/runs/{run_id}/followUp",
        data={"text": "from another tab"},
        headers={"X-Kgent-Client": "web"},
    )
    assert queued.ok, queued.text()
    deadline = time.monotonic() + TIMEOUT / 1000
    while "from another tab" not in page.evaluate("JSON.stringify(window.kgent.queued.items)"):
        assert time.monotonic() < deadline, "the page never heard of the third follow-up"
        page.wait_for_timeout(20)
    expect(page.locator("#queue .edit-text")).to_be_focused()  # not drawn again under the person's hands
    expect(page.locator("#queue .edit-text")).to_have_value("second, edited")
    page.press("#queue .edit-text", "Enter")
    expect(page.locator("#queue .text")).to_have_text(
        ["first follow-up", "second, edited", "from another tab"]
    )
    page.locator("#queue li", has_text="first follow-up").locator("button.remove").click()
    expect(page.locator("#queue .text")).to_have_text(["second, edited", "from another tab"])
    page.click("#stop")
    expect(page.locator(".run-end")).to_contain_text("Run cancelled")
