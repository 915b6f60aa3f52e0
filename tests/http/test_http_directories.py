"""The project picker's route: `GET /api/directories[?path=]` lists subdirectories under the workspace roots only,
symlinks resolved (protocol-http.md)."""

from __future__ import annotations

import os

import httpx

from kgent.testing.http_server import HttpServer


def test_browse_from_the_roots_into_a_project(server: HttpServer, client: httpx.Client) -> None:
    (server.workspace / "proj" / "src").mkdir(parents=True, exist_ok=True)
    (server.workspace / ".hidden").mkdir(exist_ok=True)
    roots = client.get("/api/directories").json()
    assert roots["path"] is None
    assert roots["directories"] == [{"name": server.workspace.name, "path": str(server.workspace)}]
    top = client.get("/api/directories", params={"path": str(server.workspace)}).json()
    names = [d["name"] for d in top["directories"]]
    assert "proj" in names and ".hidden" not in names
    assert top["parent"] is None  # a root: nothing above it is shown
    inner = client.get("/api/directories", params={"path": str(server.workspace / "proj")}).json()
    assert inner["directories"] == [{"name": "src", "path": str(server.workspace / "proj" / "src")}]
    assert inner["parent"] == str(server.workspace)


def test_nothing_outside_the_roots(server: HttpServer, client: httpx.Client, tmp_path: object) -> None:
    outside = server.workspace.parent
    res = client.get("/api/directories", params={"path": str(outside)})
    assert res.status_code == 403
    assert res.json()["error"]["data"]["code"] == "workspace_not_allowed"
    res = client.get("/api/directories", params={"path": str(server.workspace / "proj" / ".." / "..")})
    assert res.status_code == 403
    link = server.workspace / "escape"
    if not link.exists():
        os.symlink(outside, link)
    listed = client.get("/api/directories", params={"path": str(server.workspace)}).json()
    assert "escape" not in [d["name"] for d in listed["directories"]]  # a symlink out is not offered
    assert client.get("/api/directories", params={"path": str(link)}).status_code == 403
    link.unlink()
    assert (
        client.get("/api/directories", params={"path": str(server.workspace / "missing")}).status_code == 404
    )
