"""Sub-agents side by side in the web client: three `task` calls of one turn run at once; each sub-agent's run is
followed live inside its own task card, its approval asked there in its name; answering one lets that one finish
while the others still wait."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import BrowserContext, expect
from test_http_browser import context, open_page, start_run  # noqa: F401, F811  (a fixture)

from helpers import SUB_AGENTS, three_asking_sub_agents
from kgent.testing.http_server import HttpServer


def test_three_sub_agents_ask_at_once_each_in_its_own_task_card(
    context: BrowserContext,  # noqa: F811
    server: HttpServer,
    tmp_path: Path,
) -> None:
    page = open_page(context, server)
    model = three_asking_sub_agents(tmp_path / "three.json")
    start_run(page, f"scripted/{model}", "Ask three sub-agents.")
    boxes = page.locator(".card.tool .sub-run")
    cards = page.locator(".sub-run .approval.sub-agent:not(.closed)")
    expect(cards).to_have_count(3)  # all three wait at once: they run side by side
    for name in SUB_AGENTS:
        box = boxes.filter(has_text=f'sub-agent "{name}"')
        expect(box.locator(".approval .who")).to_have_text(f"Sub-agent “{name}” wants to:")
        expect(box.locator(".approval .command")).to_have_text(f"python3 -c 'print(\"{name}\")'")
    # the second's approval is in the second task card, and answering it finishes Beta alone
    second = page.locator(".card.tool").nth(1)
    expect(second.locator(".sub-name")).to_have_text('sub-agent "Beta"')
    second.locator(".approval button[data-option-id=allow_once]").click()
    expect(second.locator(".sub-run")).to_have_attribute("data-status", "settled")
    expect(cards).to_have_count(2)
    for name in ("Alpha", "Gamma"):
        expect(boxes.filter(has_text=f'sub-agent "{name}"')).to_have_attribute("data-status", "in_progress")
    for _ in range(2):
        cards.first.locator("button[data-option-id=allow_once]").click()
    expect(page.locator(".run-end")).to_contain_text("Run settled")
    expect(boxes.locator(".sub-call[data-status=completed]")).to_have_count(3)
    expect(page.locator(".msg.assistant").last).to_contain_text("All three are done.")
