"""Debian's Chromium for the browser suites (never a downloaded browser), driven by Python playwright: its path and
flags, the suites' one time bound, and what a failing browser test leaves behind (a screenshot of every page it had
open, under test-artifacts/browser/, named by the test). The `browser` and `new_context` fixtures that use these
live in tests/http/conftest.py."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from playwright.sync_api import BrowserContext, expect

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT = 60_000  # ms: generous, the machine may be loaded
# expect()'s own default is 5 s, which a loaded CI machine overran (a sign-in's dialog still open after 5 s, a long
# answer's run end not yet drawn): the suites' waits get the same bound as their actions' (a wait that holds returns
# at once; only a failure waits the whole bound).
expect.set_options(timeout=TIMEOUT)
SHOTS = os.environ.get("KGENT_HTTP_SCREENSHOTS")  # where the docs' screenshots go, when asked for
NewContext = Callable[..., BrowserContext]  # the `new_context` fixture: browser.new_context's options
ARTIFACTS = Path(os.environ.get("KGENT_TEST_ARTIFACTS", "test-artifacts")) / "browser"


def keep_pages(test: str, contexts: Iterable[BrowserContext]) -> list[Path]:
    """Screenshots of every page the failed `test` had open, so its report shows what the page showed when the wait
    gave up. Best effort: a page that is gone (or a browser that crashed) is skipped, never a second error."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", test)[-150:]
    kept: list[Path] = []
    for c, ctx in enumerate(contexts):
        for p, page in enumerate(ctx.pages):
            path = ARTIFACTS / f"{name}-{c}.{p}.png"
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(path), full_page=True, timeout=10_000)
            except Exception:  # noqa: BLE001 - the failure being reported is the test's, not this one's
                continue
            kept.append(path.resolve())
    return kept
