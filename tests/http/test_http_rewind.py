"""Rewind over HTTP (`POST /api/sessions/{id}/rewind`) and the web client's *Restore checkpoint*, in Debian's Chromium
against a real `kgent serve --http` whose workspace is a git work tree: a run edits two files, creates one and runs
`sed -i` on a fourth, the person edits one of them; the page's own dialog (never window.confirm) lists the plan and
takes Enter or Escape, the files come back, the conflict is left alone, the conversation forks before the message and
the message is back in the composer."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import BrowserContext, Dialog, Page, expect
from test_http_browser import open_page, shot, start_run

from chromium import NewContext
from kgent.testing.http_server import HttpServer, serving

A, B, C = "alpha\nbeta\ngamma\n", "alpha\nbravo\ncharlie\n", "charlie\ndelta\necho\n"
USERS = "alpha\nbravo\nCHARLIE\nthe user's line\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("rewind")
    ws = root / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    with serving(ws.resolve(), root / "state", env={"KGENT_HTTP_HEARTBEAT": "0.5"}) as srv:
        yield srv


@pytest.fixture
def files(server: HttpServer) -> Path:
    ws = server.workspace
    for name, text in (("a.txt", A), ("b.txt", B), ("c.txt", C)):
        (ws / name).write_text(text)
    (ws / "new.txt").unlink(missing_ok=True)
    return ws


@pytest.fixture
def context(new_context: NewContext, files: Path) -> BrowserContext:
    return new_context()


def _wait_end(c: httpx.Client, run_id: str) -> None:
    with c.stream("GET", f"/api/runs/{run_id}/events") as res:
        for line in res.iter_lines():
            if line.startswith("data:") and '"type":"run_end"' in line.replace(" ", ""):
                return


def test_the_route_plans_then_rewinds_and_reports_the_conflict(server: HttpServer, files: Path) -> None:
    with server.client() as c:
        body = {"prompt": "change them", "model": "rewind-edits", "mode": "full", "workspace": str(files)}
        started = c.post("/api/runs", json=body).json()
        _wait_end(c, started["runId"])
        sid = started["sessionId"]
        (files / "b.txt").write_text(USERS)
        entries = c.get(f"/api/sessions/{sid}").json()["entries"]
        entry = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "user")
        dry = c.post(f"/api/sessions/{sid}/rewind", json={"entryId": entry["id"], "dryRun": True})
        assert dry.status_code == 200, dry.text
        outcomes = {f["path"]: f["outcome"] for f in dry.json()["files"]}
        assert outcomes == {
            "a.txt": "restored",
            "b.txt": "conflict",
            "c.txt": "restored",
            "new.txt": "restored",
        }
        assert (files / "new.txt").exists()
        done = c.post(f"/api/sessions/{sid}/rewind", json={"entryId": entry["id"]}).json()
        assert done["forked"] is True and done["leafId"] == entry["parentId"]
        assert (files / "a.txt").read_text() == A and (files / "c.txt").read_text() == C
        assert not (files / "new.txt").exists() and (files / "b.txt").read_text() == USERS
        bad = c.post(f"/api/sessions/{sid}/rewind", json={"entryId": "nope"})
        assert bad.status_code == 404 and bad.json()["error"]["data"]["code"] == "entry_not_found"


def _no_native_dialog(page: Page) -> list[str]:
    """The messages of any native dialog (alert, confirm) the page opens: there should be none."""
    native: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        native.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return native


def test_restore_checkpoint_confirms_the_plan_restores_and_forks(
    context: BrowserContext, server: HttpServer
) -> None:
    ws = server.workspace
    page = open_page(context, server)
    start_run(page, "scripted/rewind-edits", "change them", mode="full")
    expect(page.locator(".run-end")).to_be_visible()
    expect(page.locator(".msg.user .rewind")).to_have_count(1)  # the session's entries reached the page
    (ws / "b.txt").write_text(USERS)
    native = _no_native_dialog(page)
    page.locator(".msg.user .rewind").click()
    dialog = page.locator("#rewind-dialog")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#rewind-question")).to_contain_text("before “change them”")
    expect(dialog.locator("#rewind-plan li")).to_contain_text(
        ["restore: a.txt", "CONFLICT (left as it is): b.txt", "restore: c.txt", "restore: new.txt"]
    )
    expect(dialog.locator("#rewind-plan li.warn")).to_contain_text(["CONFLICT (left as it is): b.txt"])
    expect(page.locator("#rewind-confirm")).to_be_focused()  # the focus moved into the dialog
    shot(page, "rewind")
    page.keyboard.press("Enter")  # confirms
    expect(dialog).to_be_hidden()
    expect(page.locator(".notice").last).to_contain_text("Checkpoint restored: 3 file(s) restored")
    expect(page.locator(".notice").last).to_contain_text("conflicts left as they are: b.txt")
    assert (ws / "a.txt").read_text() == A and (ws / "c.txt").read_text() == C
    assert not (ws / "new.txt").exists() and (ws / "b.txt").read_text() == USERS
    expect(page.locator(".msg.user")).to_have_count(0)  # forked before the only message
    expect(page.locator("#prompt")).to_have_value("change them")
    assert native == []


def test_escape_or_cancel_changes_nothing(context: BrowserContext, server: HttpServer) -> None:
    ws = server.workspace
    page = open_page(context, server)
    start_run(page, "scripted/rewind-edits", "change them", mode="full")
    expect(page.locator(".msg.user .rewind")).to_have_count(1)
    native = _no_native_dialog(page)
    for dismiss in ("Escape", "Cancel"):
        page.locator(".msg.user .rewind").click()
        expect(page.locator("#rewind-dialog")).to_be_visible()
        if dismiss == "Escape":
            page.keyboard.press("Escape")
        else:
            page.locator("#rewind-cancel").click()
        expect(page.locator("#rewind-dialog")).to_be_hidden()
        expect(page.locator(".notice").last).to_contain_text("Checkpoint not restored: nothing changed.")
        assert (ws / "a.txt").read_text() == A.replace("beta", "BETA") and (ws / "new.txt").exists()
        expect(page.locator(".msg.user")).to_have_count(1)
    assert native == []
