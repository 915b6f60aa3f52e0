"""Sign in once (protocol-http.md, "Security"): the bearer token is exchanged for an HttpOnly, SameSite=Strict session
cookie; the cookie authorises reads, and changes only with the X-Kgent-Client header; sign-out revokes it; bearer
tokens keep working."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from kgent.testing.http_server import HttpServer


@contextmanager
def signed_in(server: HttpServer) -> Iterator[tuple[httpx.Client, str]]:
    with httpx.Client(base_url=server.url, timeout=60) as c:
        res = c.post("/api/login", headers=server.headers)
        assert res.status_code == 200, res.text
        yield c, res.headers["set-cookie"]


def test_the_token_buys_an_http_only_strict_cookie(server: HttpServer) -> None:
    with signed_in(server) as (c, header):
        port = server.url.rsplit(":", 1)[1]
        assert header.startswith(f"kgent_session_{port}=")
        for part in ("HttpOnly", "SameSite=Strict", "Path=/"):
            assert part in header
        assert server.token not in header
        assert c.get("/api/info").status_code == 200  # the cookie alone
        assert c.get("/api/workspaces").json()["roots"] == [str(server.workspace)]


def test_a_wrong_token_gets_no_cookie(server: HttpServer) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as c:
        res = c.post("/api/login", headers={"Authorization": "Bearer wrong"})
        assert res.status_code == 401
        assert "set-cookie" not in res.headers
        assert c.post("/api/login").status_code == 401


def test_a_change_by_cookie_needs_the_client_header(server: HttpServer) -> None:
    with signed_in(server) as (c, _):
        body = {"entryId": "nope"}
        res = c.post("/api/sessions/none/fork", json=body)  # what a cross-site form could send: refused
        assert res.status_code == 401
        res = c.post("/api/sessions/none/fork", json=body, headers={"X-Kgent-Client": "web"})
        assert res.status_code == 404  # through the guard: the session does not exist


def test_sign_out_revokes_the_cookie_and_bearer_keeps_working(server: HttpServer) -> None:
    with signed_in(server) as (c, header):
        stolen = header.split(";", 1)[0]
        assert c.post("/api/logout").status_code == 401  # without the client header: not even sign-out
        res = c.post("/api/logout", headers={"X-Kgent-Client": "web"})
        assert res.status_code == 200
        assert "Max-Age=0" in res.headers["set-cookie"]
    with httpx.Client(base_url=server.url, timeout=60) as other:  # the old cookie, replayed: refused
        assert other.get("/api/info", headers={"Cookie": stolen}).status_code == 401
        assert other.get("/api/info", headers=server.headers).status_code == 200
