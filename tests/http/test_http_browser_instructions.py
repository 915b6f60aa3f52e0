"""The web client shows the instruction files a run loaded: a line in the session view per `instructions` event
(real Chromium against a real `kgent serve --http` on the scripted provider)."""

from __future__ import annotations

import re

from playwright.sync_api import BrowserContext, expect
from test_http_browser import context, open_page, start_run  # noqa: F401, F811  (a fixture)

from kgent.testing.http_server import HttpServer


def test_the_session_view_has_a_line_per_instructions_event(
    context: BrowserContext,  # noqa: F811
    server: HttpServer,
) -> None:
    ws = server.workspace
    (ws / "src").mkdir(exist_ok=True)
    (ws / "AGENTS.md").write_text("ROOT rules\n")
    (ws / "src" / "AGENTS.md").write_text("SRC rules\n")
    (ws / "src" / "app.py").write_text("x = 1\n")
    page = open_page(context, server)
    start_run(page, "scripted/nested-instructions", "Check src/app.py.")
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    lines = page.locator(".notice", has_text=re.compile(r"^instructions "))
    expect(lines).to_have_text(
        [f"instructions loaded {ws}/AGENTS.md", f"instructions loaded {ws}/src/AGENTS.md"]
    )
