"""HTTP fixtures: `kgent serve --http` as a real subprocess (scripted provider), one per module, and a fresh
workspace file set per test."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from kgent.testing.http_server import HttpServer, start

SAMPLE = "value = 1\nprint(value)\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("http")
    ws = root / "ws"
    ws.mkdir()
    srv = start(ws.resolve(), root / "state", env={"KGENT_HTTP_HEARTBEAT": "0.5"})
    try:
        yield srv
    finally:
        code = srv.stop()
        log = "".join(srv.output)
        assert "Traceback" not in log, log
        assert code == 0, log


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
