"""Slash commands over HTTP: `GET /api/commands` lists the project's and the user's templates beside the built-ins,
`POST /api/runs` expands `/name args` (an unknown name is a 400 with close names); and the web client's composer
completes `/` in a real browser (Debian's Chromium through playwright), the picked template running expanded."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import BrowserContext, expect
from test_http_browser import open_page

from chromium import NewContext
from kgent.testing.http_server import HttpServer, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("slash")
    ws = (root / "ws").resolve()
    (ws / ".kgent" / "prompts").mkdir(parents=True)
    (ws / ".kgent" / "prompts" / "explain.md").write_text(
        "---\ndescription: Explain a file\nargument-hint: <path>\n---\nExplain $1 please.\n"
    )
    (root / "config" / "prompts").mkdir(parents=True)
    (root / "config" / "prompts" / "standup.md").write_text("Write my stand-up from $ARGUMENTS.\n")
    with serving(ws, root / "state", env={"KGENT_CONFIG_DIR": str(root / "config")}) as srv:
        yield srv


def test_commands_are_listed_and_expanded(server: HttpServer) -> None:
    with server.client() as client:
        listed = client.get("/api/commands", params={"workspace": str(server.workspace)})
        assert listed.status_code == 200, listed.text
        by_name = {c["name"]: c for c in listed.json()["commands"]}
        assert by_name["explain"] == {
            "name": "explain",
            "description": "Explain a file",
            "argumentHint": "<path>",
            "source": "project",
            "action": "prompt",
            "path": str(server.workspace / ".kgent" / "prompts" / "explain.md"),
        }
        assert by_name["standup"]["source"] == "user" and by_name["compact"]["source"] == "builtin"
        outside = client.get("/api/commands", params={"workspace": "/"})
        assert outside.status_code == 403, outside.text  # only the served workspace roots
        body = {"prompt": "/explian a.py", "workspace": str(server.workspace), "model": "hello"}
        unknown = client.post("/api/runs", json=body)
        assert unknown.status_code == 400 and unknown.json()["error"]["data"]["suggestions"] == ["explain"]
        helped = client.post("/api/command", json={"text": "/help", "workspace": str(server.workspace)})
        assert (
            helped.status_code == 200
            and "/explain <path> — Explain a file (project)" in helped.json()["text"]
        )
        refused = client.post("/api/runs", json={"prompt": "/cost", "workspace": str(server.workspace)})
        assert refused.status_code == 400 and refused.json()["error"]["data"]["code"] == "not_a_prompt"
        ran = client.post(
            "/api/runs", json={"prompt": "Hi", "workspace": str(server.workspace), "model": "hello"}
        )
        assert ran.status_code == 200, ran.text
        sid = ran.json()["sessionId"]
        with client.stream("GET", f"/api/runs/{ran.json()['runId']}/events") as events:
            for line in events.iter_lines():
                if '"run_end"' in line:
                    break
        page = client.get(f"/api/sessions/{sid}/export", params={"format": "html"})
        assert page.status_code == 200, page.text
        assert page.json()["mimeType"] == "text/html" and "Hi" in page.json()["text"]
        assert client.get(f"/api/sessions/{sid}/export", params={"format": "pdf"}).status_code == 400


@pytest.fixture
def context(new_context: NewContext) -> BrowserContext:  # noqa: F811 - the imported fixture
    return new_context()


def test_the_composer_completes_a_template_and_runs_it(context: BrowserContext, server: HttpServer) -> None:
    page = open_page(context, server)
    page.select_option("#provider", "scripted")
    page.fill("#model", "hello")
    page.click("#prompt")
    page.keyboard.type("/")
    items = page.locator("#slash-menu .slash-item")
    expect(items).to_have_count(11)  # the 9 built-ins, explain, standup
    page.keyboard.type("ex")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("/explain <path> — Explain a file (project)")
    page.keyboard.press("Enter")  # picks: the prompt is not sent yet
    expect(page.locator("#prompt")).to_have_value("/explain ")
    expect(page.locator("#slash-menu")).to_be_hidden()
    page.keyboard.type("app.py")
    page.click("#send")
    expect(page.locator(".msg.user")).to_contain_text("Explain app.py please.")  # what the model was sent
    expect(page.locator(".run-end")).to_contain_text("Run settled")
