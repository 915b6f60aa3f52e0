"""The web client's images in a real browser (Debian's Chromium through playwright): an image pasted into the box
and one picked with "Attach image" show as chips, go out as `image` blocks with the prompt, and show on the sent
message; a file that is not an image is refused in the page."""

from __future__ import annotations

import base64
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import BrowserContext, expect
from test_http_browser import open_page, paste_image

from chromium import NewContext
from kgent.testing.http_server import HttpServer
from kgent.testing.images import png


@pytest.fixture
def context(new_context: NewContext) -> BrowserContext:
    return new_context()


def test_paste_and_upload_images_then_send_them(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    page = open_page(context, server)
    paste_image(page, "pasted.png", png(2, 2))
    picked = tmp_path / "picked.png"
    picked.write_bytes(png(3, 3, (0, 255, 0)))
    with page.expect_file_chooser() as chooser:
        page.click("#attach-image")
    chooser.value.set_files(str(picked))
    expect(page.locator("#images .image-chip")).to_have_count(2)
    expect(page.locator("#images .image-chip")).to_contain_text(["pasted.png", "picked.png"])
    page.select_option("#provider", "scripted")
    page.fill("#model", "hello")
    page.fill("#prompt", "What are these?")
    with page.expect_response("**/api/runs") as posted:
        page.click("#send")
    sent = posted.value.request.post_data_json
    assert [b["type"] for b in sent["prompt"]] == ["text", "image", "image"]
    assert base64.b64decode(sent["prompt"][2]["data"]) == png(3, 3, (0, 255, 0))
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    expect(page.locator(".msg.user .image-chip")).to_contain_text(["pasted.png", "picked.png"])
    expect(page.locator("#images .image-chip")).to_have_count(0)
    session = posted.value.json()["sessionId"]
    with httpx.Client(base_url=server.url, headers=server.headers) as api:
        entries = api.get(f"/api/sessions/{session}").json()["entries"]
    images = next(e["message"]["images"] for e in entries if e["type"] == "message")
    assert [i["name"] for i in images] == ["pasted.png", "picked.png"]


def test_a_file_that_is_not_an_image_is_refused_in_the_page(
    context: BrowserContext, server: HttpServer, tmp_path: Path
) -> None:
    page = open_page(context, server)
    text = tmp_path / "notes.txt"
    text.write_text("not a picture")
    with page.expect_file_chooser() as chooser:
        page.click("#attach-image")
    chooser.value.set_files(str(text))
    expect(page.locator(".notice").last).to_contain_text("notes.txt is not a PNG, JPEG, WebP or GIF image")
    expect(page.locator("#images .image-chip")).to_have_count(0)
