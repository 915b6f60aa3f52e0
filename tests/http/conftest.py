"""HTTP fixtures: `kgent serve --http` as a real subprocess (scripted provider), one per module, and a fresh
workspace file set per test; for the browser suites one Chromium per module and fresh contexts per test, whose pages
a failing test leaves as screenshots (tests/chromium.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, sync_playwright

from chromium import ARGS, CHROMIUM, TIMEOUT, NewContext, keep_pages
from kgent.testing.http_server import HttpServer, serving

_CONTEXTS = pytest.StashKey[list[BrowserContext]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A browser test that failed keeps a screenshot of each page it had open (before its fixtures close them), and
    its report says where."""
    report = yield
    if report.failed and report.when in ("setup", "call") and item.stash.get(_CONTEXTS, None):
        paths = keep_pages(item.nodeid, item.stash[_CONTEXTS])
        report.sections.append(("browser screenshots", "\n".join(map(str, paths)) or "none could be taken"))
    return report


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def new_context(browser: Browser, request: pytest.FixtureRequest) -> Iterator[NewContext]:
    """Makes browser contexts (a 1280×820 window unless told otherwise) with the suites' time bound; each closed after
    the test, and no page of theirs may have thrown an uncaught error. A failing test's pages are kept as screenshots
    (pytest_runtest_makereport above)."""
    contexts: list[BrowserContext] = []
    request.node.stash[_CONTEXTS] = contexts
    errors: list[str] = []

    def make(**options: Any) -> BrowserContext:
        options.setdefault("viewport", {"width": 1280, "height": 820})
        ctx = browser.new_context(**options)
        ctx.set_default_timeout(TIMEOUT)
        ctx.on("weberror", lambda e: errors.append(str(e.error)))
        contexts.append(ctx)
        return ctx

    yield make
    for ctx in contexts:
        ctx.close()
    assert not errors, errors


SAMPLE = "value = 1\nprint(value)\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("http")
    ws = root / "ws"
    ws.mkdir()
    with serving(ws.resolve(), root / "state", env={"KGENT_HTTP_HEARTBEAT": "0.5"}) as srv:
        yield srv


@pytest.fixture
def client(server: HttpServer) -> Iterator[httpx.Client]:
    (server.workspace / "sample.py").write_text(SAMPLE)
    (server.workspace / "notes.txt").write_text("hello\n")
    with server.client() as c:
        yield c


def run(client: httpx.Client, model: str, prompt: str = "go", **params: object) -> dict[str, str]:
    """Start a run (mode ask unless given) in the server's workspace unless a sessionId is given."""
    body: dict[str, object] = {"prompt": prompt, "model": model, "mode": "ask", **params}
    if "sessionId" not in body:
        body.setdefault("workspace", str(client.get("/api/workspaces").json()["roots"][0]))
    res = client.post("/api/runs", json=body)
    assert res.status_code == 200, res.text
    out: dict[str, str] = res.json()
    return out
