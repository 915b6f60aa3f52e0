"""The web client as a daily driver (round 4), in Debian's Chromium against a real `kgent serve --http` (scripted
provider): images shown as thumbnails (composer, transcript, after a reload), a rewind to the first prompt offering
the old conversation as a branch at once, the page at 390 px and 1280 px in light and dark, the approval card
answered by the keys it advertises (and a project rule that answers the next identical call), the sessions list by
keyboard and the first-use hint. KGENT_HTTP_SCREENSHOTS=DIR saves the docs' screenshots of the page there. The
server's user config directory is a temporary one (XDG_CONFIG_HOME): the project rule never reaches the real user's
settings."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect
from test_http_browser import open_page, paste_image, shot, start_run

from chromium import TIMEOUT, NewContext
from kgent.testing.http_server import HttpServer, serving, write_script
from kgent.testing.images import png

NARROW = {"width": 390, "height": 844}
WIDE = {"width": 1280, "height": 820}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("round4b")
    ws = root / "ws"
    ws.mkdir()
    env = {"KGENT_HTTP_HEARTBEAT": "0.5", "XDG_CONFIG_HOME": str(root / "config")}
    with serving(ws.resolve(), root / "state", env=env) as srv:
        yield srv


@pytest.fixture(autouse=True)
def files(server: HttpServer) -> None:
    (server.workspace / "notes.txt").write_text("hello\n")
    (server.workspace / "sample.py").write_text("value = 1\nprint(value)\n")


def poll(page: Page, what: str, check: str, target: str) -> object:
    """Evaluate `check` (a function of the elements matching `target`) until it is truthy; its value. A deadline,
    never a sleep-then-check (and no wait_for_function: the page's CSP refuses a string evaluated inside it)."""
    deadline = time.monotonic() + TIMEOUT / 1000
    while True:
        value = page.evaluate(f"(els => ({check}))([...document.querySelectorAll({target!r})])")
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        page.wait_for_timeout(20)


def loaded_widths(page: Page, target: str) -> list[int]:
    """The natural widths of the images matching `target` once each has loaded (0: it did not load)."""
    widths = poll(
        page,
        f"the images {target}",
        "els.length && els.every((i) => i.complete) && els.map((i) => i.naturalWidth)",
        target,
    )
    assert isinstance(widths, list)
    return widths


def test_images_show_as_thumbnails_in_the_composer_the_transcript_and_after_a_reload(
    new_context: NewContext, server: HttpServer
) -> None:
    page = open_page(new_context(), server)
    paste_image(page, "screen.png", png(40, 24, (200, 60, 20)))
    chip = page.locator("#images .image-chip")
    expect(chip).to_contain_text("screen.png")
    assert chip.locator("img.thumb").get_attribute("src").startswith("blob:")  # type: ignore[union-attr]
    assert loaded_widths(page, "#images img.thumb") == [40]  # the picture itself, not a broken image
    start_run(page, "scripted/hello", "What is on this screen?", mode="full")
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    expect(page.locator("#images .image-chip")).to_have_count(0)
    expect(page.locator(".msg.user .image-chip")).to_contain_text("screen.png")
    assert loaded_widths(page, ".msg.user img.thumb") == [40]  # from the session's stored bytes
    page.reload()
    expect(page.locator(".msg.user .image-chip")).to_contain_text("screen.png")
    assert loaded_widths(page, ".msg.user img.thumb") == [40]
    # the thumbnail links to the whole image, which only a signed-in browser gets
    href = page.locator(".msg.user .image-chip a").get_attribute("href") or ""
    shown = page.request.get(f"{server.url}{href}")
    assert shown.body() == png(40, 24, (200, 60, 20)) and shown.headers["content-type"] == "image/png"
    with httpx.Client(base_url=server.url) as anyone:
        assert anyone.get(href).status_code == 401
    other = href.rsplit("/", 1)[0] + "/" + "0" * 64  # a hash no entry of the session names
    with server.client() as api:
        missing = api.get(other)
    assert missing.status_code == 404 and missing.json()["error"]["data"]["code"] == "image_not_found"
    paste_image(page, "next.png", png(24, 24, (30, 120, 220)))
    assert loaded_widths(page, "#images img.thumb") == [24]
    shot(page, "images")


def test_a_rewind_to_the_first_prompt_offers_the_old_conversation_as_a_branch_at_once(
    new_context: NewContext, server: HttpServer
) -> None:
    page = open_page(new_context(), server)
    start_run(page, "scripted/hello", "first prompt", mode="full")
    expect(page.locator(".run-end")).to_have_count(1)
    start_run(page, "scripted/hello", "second prompt", mode="full")
    expect(page.locator(".run-end")).to_have_count(2)
    expect(page.locator("#branches .branch")).to_have_count(0)  # one conversation, nothing to switch to
    page.locator(".msg.user", has_text="first prompt").locator(".rewind").click()
    expect(page.locator("#rewind-dialog")).to_be_visible()
    page.keyboard.press("Enter")
    expect(page.locator(".notice").last).to_contain_text("Checkpoint restored")
    expect(page.locator(".msg.user")).to_have_count(0)
    # before any new prompt: the old conversation (named by its last prompt) and the new, empty one shown
    branches = page.locator("#branches .branch")
    expect(branches).to_have_count(2)
    expect(page.locator("#branches .branch.current")).to_have_text("2: (new, from the start)")
    page.locator("#branches .branch", has_text="second prompt").click()
    expect(page.locator(".msg.user")).to_have_count(2)
    expect(page.locator(".msg.user").first).to_contain_text("first prompt")
    expect(page.locator(".msg.user").last).to_contain_text("second prompt")
    # back on it, the empty start holds nothing to go back to: one conversation, no switcher
    expect(branches).to_have_count(0)
    # rewound again and continued: the new branch is an ordinary leaf, still two branches, not three
    page.locator(".msg.user", has_text="first prompt").locator(".rewind").click()
    expect(page.locator("#rewind-dialog")).to_be_visible()
    page.keyboard.press("Enter")
    expect(page.locator("#branches .branch.current")).to_have_text("2: (new, from the start)")
    start_run(page, "scripted/hello", "other prompt", mode="full")
    expect(page.locator(".run-end")).to_have_count(1)
    expect(page.locator("#branches .branch.current")).to_contain_text("other prompt")
    expect(branches).to_have_count(2)


# -- 390 px and 1280 px, light and dark -------------------------------------------------------------------------------
def no_sideways_scroll(page: Page, width: int) -> None:
    scroll = page.evaluate("document.scrollingElement.scrollWidth")
    assert scroll <= width, f"the page scrolls sideways: {scroll} px wide in a {width} px window"


def box(locator: Locator) -> dict[str, float]:
    b = locator.bounding_box()
    assert b is not None, locator
    return b


def lines(locator: Locator) -> float:
    """How many lines an element's text takes (its height over its line height)."""
    return float(
        locator.evaluate("e => e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight)")
    )


def luminance(page: Page, selector: str = "body") -> float:
    """The relative luminance (0 black … 1 white) of the element's computed background colour."""
    rgba = page.eval_on_selector(
        selector, "e => getComputedStyle(e).backgroundColor.match(/[0-9.]+/g).map(Number)"
    )
    assert len(rgba) == 3 or rgba[3] == 1, f"{selector}'s background is not opaque: {rgba}"
    r, g, b = (
        ((c / 255) / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4) for c in rgba[:3]
    )
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def show_the_start(page: Page) -> None:
    """The log at its end and the header at its start (typing the model scrolled the narrow header to its field)."""
    page.evaluate(
        "document.getElementById('log').scrollTop = 1e9; document.getElementById('bar').scrollLeft = 0"
    )


def test_a_phone_sized_window_fits_the_drawer_and_the_approval_card(
    new_context: NewContext, server: HttpServer
) -> None:
    page = open_page(new_context(viewport=NARROW, color_scheme="light"), server)
    no_sideways_scroll(page, 390)
    # the sessions pane starts closed on a narrow screen; the chat takes the width
    expect(page.locator("#sessions-pane")).to_be_hidden()
    assert box(page.locator("#chat"))["width"] >= 388
    page.click("#sessions-toggle")
    expect(page.locator("#sessions-pane")).to_be_visible()
    expect(page.locator("#sessions-toggle")).to_have_attribute("aria-expanded", "true")
    assert box(page.locator("#sessions-pane"))["width"] <= 390
    page.keyboard.press("Escape")
    expect(page.locator("#sessions-pane")).to_be_hidden()
    page.click("#sessions-toggle")
    expect(page.locator("#sessions-pane")).to_be_visible()
    page.click("#sessions-toggle")
    expect(page.locator("#sessions-pane")).to_be_hidden()
    # an approval card, its buttons inside the window, its words not one per line
    start_run(page, "scripted/read-then-write", "Please rewrite notes.txt", mode="ask")
    card = page.locator(".approval")
    expect(card).to_be_focused()
    no_sideways_scroll(page, 390)
    assert box(card)["width"] >= 300
    assert lines(card.locator(".card-title")) <= 2
    assert lines(card.locator(".why")) <= 3
    for button in card.locator(".buttons > button, .buttons summary").all():
        b = box(button)
        assert b["x"] >= 0 and b["x"] + b["width"] <= 390, button.inner_text()
        assert lines(button) < 1.6, button.inner_text()  # "Allow once" on one line
    assert box(page.locator("#bar"))["height"] < 60  # one row of controls, scrolled inside itself
    show_the_start(page)
    shot(page, "narrow-approval")
    page.keyboard.press("m")  # the lasting answers open inside the window too
    for button in card.locator("ul.lasting button").all():
        b = box(button)
        assert b["x"] >= 0 and b["x"] + b["width"] <= 390, button.inner_text()
    no_sideways_scroll(page, 390)
    page.keyboard.press("Escape")  # closes the menu
    page.keyboard.press("a")
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    no_sideways_scroll(page, 390)
    # the sessions pane closes once a session is picked in it
    page.click("#sessions-toggle")
    page.locator("#sessions li", has_text="Please rewrite notes.txt").first.click()
    expect(page.locator("#sessions-pane")).to_be_hidden()
    expect(page.locator(".msg.user")).to_have_count(1)
    show_the_start(page)
    shot(page, "narrow")


def test_a_desktop_window_shows_the_sessions_beside_the_chat(
    new_context: NewContext, server: HttpServer
) -> None:
    page = open_page(new_context(viewport=WIDE, color_scheme="light"), server)
    expect(page.locator("#sessions-pane")).to_be_visible()
    assert luminance(page) > 0.8
    start_run(page, "scripted/read-then-write", "Please rewrite notes.txt", mode="ask")
    expect(page.locator(".approval")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    no_sideways_scroll(page, 1280)
    assert box(page.locator("#bar"))["height"] < 60  # the header is one row
    pane, chat = box(page.locator("#sessions-pane")), box(page.locator("#chat"))
    assert pane["x"] + pane["width"] <= chat["x"] + 1 and chat["width"] >= 900  # side by side
    page.click("#sessions-toggle")  # and hidden for the whole width
    expect(page.locator("#sessions-pane")).to_be_hidden()
    assert box(page.locator("#chat"))["width"] >= 1270
    page.click("#sessions-toggle")
    expect(page.locator("#sessions-pane")).to_be_visible()
    shot(page, "web-client")


@pytest.mark.parametrize("viewport", [NARROW, WIDE], ids=["390px", "1280px"])
def test_dark_follows_the_system_and_the_toggle_picks_light_for_good(
    new_context: NewContext, server: HttpServer, viewport: dict[str, int]
) -> None:
    page = open_page(new_context(viewport=viewport, color_scheme="dark"), server)
    expect(page.locator("#theme")).to_have_text("Theme: auto")
    assert luminance(page) < 0.05
    assert luminance(page, "#composer") < 0.05
    if viewport == WIDE:
        start_run(page, "scripted/read-then-write", "Please rewrite notes.txt", mode="ask")
        card = page.locator(".approval")
        expect(card).to_be_focused()
        assert luminance(page, ".approval") < 0.1
        shot(page, "dark")
        page.keyboard.press("Enter")
        expect(page.locator(".run-end")).to_contain_text("Run settled")
    no_sideways_scroll(page, viewport["width"])
    while page.locator("#theme").inner_text() != "Theme: light":  # auto → dark → light
        page.click("#theme")
    assert luminance(page) > 0.8
    page.reload()
    expect(page.locator("#theme")).to_have_text("Theme: light")  # remembered by this browser
    assert luminance(page) > 0.8
    page.click("#theme")  # back to following the system
    expect(page.locator("#theme")).to_have_text("Theme: auto")
    assert luminance(page) < 0.05


# -- the approval card by keyboard ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("key", "label"),
    [("Enter", "allowed once"), ("Escape", "rejected"), ("a", "allowed once"), ("r", "rejected")],
)
def test_the_card_answers_the_keys_it_advertises(
    new_context: NewContext, server: HttpServer, key: str, label: str
) -> None:
    page = open_page(new_context(), server)
    start_run(page, "scripted/read-then-write", "Please rewrite notes.txt", mode="ask")
    card = page.locator(".approval")
    expect(card).to_be_focused()
    if key in "ar":
        expect(card.locator(f'button[data-key="{key.upper()}"]')).to_be_visible()  # the key it shows
    page.keyboard.press(key)
    expect(card.locator(".decision")).to_have_text(label)
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    # settled: one line says how, and nothing of the choices is left (no second list of rules)
    expect(card.locator(".decision")).to_have_count(1)
    for gone in (".buttons", "button", ".rule-line", "ul.lasting", "details.more"):
        expect(card.locator(gone)).to_have_count(0)
    assert (server.workspace / "notes.txt").read_text() == (
        "rewritten\n" if "allowed" in label else "hello\n"
    )


def test_always_in_this_project_from_the_menu_answers_the_next_identical_call(
    new_context: NewContext, server: HttpServer, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path,
        "keyboard-write",
        [[{"tool": "write", "args": {"path": "by-key.txt", "content": "typed\n"}}], [{"text": "Written."}]],
    )
    page = open_page(new_context(), server)
    start_run(page, f"scripted/{script}", "write by-key.txt", mode="ask")
    card = page.locator(".approval")
    expect(card).to_be_focused()
    page.keyboard.press("m")  # the menu of lasting answers opens, its first answer focused
    menu = card.locator("ul.lasting")
    expect(menu).to_be_visible()
    expect(menu.locator("button").first).to_be_focused()
    project = menu.locator("button", has_text="Always allow").filter(has_text="in this project")
    expect(project).to_have_count(1)
    page.keyboard.press(project.get_attribute("data-key") or "?")  # the digit it shows
    expect(card.locator(".decision")).to_have_text("always allowed in this project")
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    for gone in (".buttons", ".rule-line", "ul.lasting"):
        expect(card.locator(gone)).to_have_count(0)
    (server.workspace / "by-key.txt").unlink()
    # the same call again, in a new session: no card, the project rule answers and the call says so
    page.click("#new-session")
    start_run(page, f"scripted/{script}", "write by-key.txt again", mode="ask")
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    expect(page.locator(".approval")).to_have_count(0)
    decision = page.locator(".card.tool .decision")
    expect(decision).to_contain_text("allowed by the project rule")
    expect(decision.locator("code")).to_contain_text("by-key.txt")
    assert (server.workspace / "by-key.txt").read_text() == "typed\n"


# -- the sessions list by keyboard, and the first-use hint ------------------------------------------------------------
def test_the_first_use_hint_shows_on_an_empty_page_only(new_context: NewContext, server: HttpServer) -> None:
    page = open_page(new_context(), server)
    hint = page.locator("#first-use")
    expect(hint).to_be_visible()
    expect(hint).to_contain_text("Ask Kgent to do something in this project")
    expect(hint).to_contain_text("Enter allows once, Escape rejects")
    start_run(page, "scripted/hello", "hello there", mode="full")
    expect(hint).to_be_hidden()
    expect(page.locator(".run-end")).to_be_visible()
    page.reload()  # an open session: no hint
    expect(page.locator(".msg.user")).to_have_count(1)
    expect(hint).to_be_hidden()
    page.click("#new-session")  # empty again
    expect(hint).to_be_visible()


def test_sessions_are_opened_renamed_and_deleted_by_keyboard(
    new_context: NewContext, server: HttpServer
) -> None:
    page = open_page(new_context(), server)
    start_run(page, "scripted/hello", "keyboard session", mode="full")
    expect(page.locator(".run-end")).to_be_visible()
    page.click("#new-session")
    row = page.locator("#sessions li").first  # the newest first
    expect(row).to_contain_text("keyboard session")
    # Tab from the search box reaches the rows; Enter opens one
    page.focus("#session-search")
    page.keyboard.press("Tab")
    expect(row).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".msg.user")).to_contain_text("keyboard session")
    # its Rename and Delete are the next stops
    page.keyboard.press("Tab")
    expect(row.locator("button.rename")).to_be_focused()
    page.keyboard.press("Enter")
    rename = row.locator("input.rename-input")
    expect(rename).to_be_focused()
    page.keyboard.press("Control+a")
    page.keyboard.type("renamed by keys")
    page.keyboard.press("Enter")
    row = page.locator("#sessions li", has_text="renamed by keys")
    expect(row).to_have_count(1)
    expect(page.locator("#session-title")).to_contain_text("renamed by keys")
    expect(row).to_be_focused()  # the keyboard stays on the row the list was drawn again with
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(row.locator("button.delete")).to_be_focused()
    page.keyboard.press("Enter")
    dialog = page.locator("#delete-dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#delete-cancel")).to_be_focused()  # the safe answer first
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(row).to_have_count(1)  # nothing deleted
    row.locator("button.delete").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#delete-cancel")).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(page.locator("#delete-confirm")).to_be_focused()
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    expect(row).to_have_count(0)
    expect(page.locator("#session-title")).to_have_text("New session")
