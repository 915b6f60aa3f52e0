"""The HTTP front's outer wall against a real `kgent serve --http`: the Host allowlist (a DNS-rebinding page names its
own host), the security headers on the page, its files and the API, connections whose request never arrives complete
are closed, an events stream of a session that does not exist is a 404, and every malformed Last-Event-ID a 400."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run
from kgent.http.hub import Hub
from kgent.http.security import CSP, allowed_hosts, host_of
from kgent.http.streams import session_resume, start_seq
from kgent.service.errors import INVALID_PARAMS, ServiceError
from kgent.testing.http_server import HttpServer, start

SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def _port(server: HttpServer) -> int:
    port = urlsplit(server.url).port
    assert port is not None
    return port


# -- Host ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1.nip.io:{port}", "kgent.local"]
)
def test_a_host_outside_the_allowlist_is_refused_before_anything_else(
    server: HttpServer, client: httpx.Client, host: str
) -> None:
    for path in ("/", "/health", "/api/info", "/static/app.js"):
        res = client.get(path, headers={"Host": host.format(port=_port(server))})
        assert res.status_code == 421, (path, res.status_code)
        error = res.json()["error"]
        assert (
            error["data"]["code"] == "host_not_allowed" and "does not answer to the host" in error["message"]
        )
        assert {k: res.headers.get(k) for k in SECURITY_HEADERS} == SECURITY_HEADERS


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST.", "[::1]:{port}", "127.0.0.1"]
)
def test_loopback_names_are_served(server: HttpServer, client: httpx.Client, host: str) -> None:
    res = client.get("/api/info", headers={"Host": host.format(port=_port(server))})
    assert res.status_code == 200, res.text


def _raw(server: HttpServer, request: bytes) -> bytes:
    """Send `request` on a fresh connection and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", _port(server)), timeout=60) as sock:
        sock.sendall(request)
        return _read_all(sock)


def _read_all(sock: socket.socket) -> bytes:
    got = b""
    while chunk := sock.recv(65536):
        got += chunk
    return got


def test_no_host_or_two_hosts_or_a_malformed_one_is_a_400(server: HttpServer) -> None:
    assert _raw(server, b"GET /health HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.1 400")
    two = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
    assert _raw(server, two).startswith(b"HTTP/1.1 400")
    bad = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1:http\r\nConnection: close\r\n\r\n"
    assert _raw(server, bad).startswith(b"HTTP/1.1 400")


def test_the_allowlist_holds_what_the_user_binds_and_names() -> None:
    assert allowed_hosts("127.0.0.1", {}) == {"localhost", "127.0.0.1", "::1"}
    hosts = allowed_hosts("192.168.1.20", {"KGENT_HTTP_ALLOWED_HOSTS": "Box.Lan., kgent.example"})
    assert {"192.168.1.20", "box.lan", "kgent.example", "localhost"} <= hosts
    assert socket.gethostname().lower() in allowed_hosts("0.0.0.0", {})
    assert allowed_hosts("[::]", {}) >= {"::", socket.gethostname().lower()}
    assert host_of("[0:0::1]:8000") == "::1" and host_of("[::1") is None and host_of(":80") is None


# -- headers ---------------------------------------------------------------------------------------------------------
def test_every_response_carries_the_security_headers(server: HttpServer, client: httpx.Client) -> None:
    responses = [
        client.get("/"),
        client.get("/static/app.js"),
        client.get("/static/app.css"),
        client.get("/api/info"),
        client.get("/api/runs/run-000000/events"),  # 404
        httpx.get(f"{server.url}/api/info"),  # 401, no token
    ]
    assert [r.status_code for r in responses] == [200, 200, 200, 200, 404, 401]
    for res in responses:
        assert {k: res.headers.get(k) for k in SECURITY_HEADERS} == SECURITY_HEADERS, res.url


# -- requests that never complete ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """A server that gives a request half a second to arrive complete."""
    root = tmp_path_factory.mktemp("quick")
    (root / "ws").mkdir()
    srv = start(
        (root / "ws").resolve(),
        root / "state",
        env={"KGENT_HTTP_REQUEST_TIMEOUT": "0.5", "KGENT_HTTP_HEARTBEAT": "0.2"},
    )
    try:
        yield srv
    finally:
        assert srv.stop() == 0, "".join(srv.output)


@pytest.mark.parametrize(
    "sent",
    [
        b"",  # connects, sends nothing
        b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n",  # half a head
        b"GET /health HTTP/1.1\r\nHo",
        b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer TOKEN\r\n"
        b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"prompt":',  # half a body
    ],
)
def test_a_request_that_never_arrives_complete_is_closed_by_the_server(
    quick: HttpServer, sent: bytes
) -> None:
    assert (
        _raw(quick, sent.replace(b"TOKEN", quick.token.encode())) == b""
    )  # closed without an answer (recv returned b"" long before the 60 s timeout)


def test_hundreds_of_half_open_connections_are_all_closed(quick: HttpServer) -> None:
    socks = [socket.create_connection(("127.0.0.1", _port(quick)), timeout=60) for _ in range(200)]
    try:
        for sock in socks:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert all(_read_all(sock) == b"" for sock in socks)
    finally:
        for sock in socks:
            sock.close()
    with quick.client() as c:
        assert c.get("/health").status_code == 200


def test_a_complete_request_is_answered_and_a_long_stream_is_never_cut(quick: HttpServer) -> None:
    keep_alive = (
        b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    assert _raw(quick, keep_alive).count(b"HTTP/1.1 200") == 2
    with quick.client() as c:
        started = run(c, "hello", mode="full")
        c.get(f"/api/runs/{started['runId']}/events").raise_for_status()  # until it ended
        path = (
            f"/api/sessions/{started['sessionId']}/events"  # no live run: the stream waits for the next one
        )
        with c.stream("GET", path) as res:
            assert res.status_code == 200
            pings = 0
            for line in res.iter_lines():
                pings += line.startswith(":")
                if pings == 10:  # ten heartbeats, 0.2 s apart: well past the 0.5 s a request has to arrive
                    break
        assert pings == 10


def test_a_head_growing_over_the_limit_is_a_400(server: HttpServer) -> None:
    growing = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 20_000  # and more to come
    assert _raw(server, growing).startswith(b"HTTP/1.1 400")


# -- streams ---------------------------------------------------------------------------------------------------------
def test_the_events_of_a_session_that_does_not_exist_are_a_404(client: httpx.Client) -> None:
    for sid in ("nosuchsession0", "x" * 64, "a%20b", "-" * 65):
        res = client.get(f"/api/sessions/{sid}/events")
        assert res.status_code == 404, (sid, res.text)
        assert res.json()["error"]["data"]["code"] == "session_not_found"


MALFORMED = ["²", "1" * 5000, "-1", "-0", "abc", "1.5", "0x10", "１", "1e3", "12 3", "+4", "9" * 16]


def test_every_malformed_last_event_id_is_a_400(client: httpx.Client, tmp_path: Path) -> None:
    started = run(client, "hello", mode="full")
    client.get(f"/api/runs/{started['runId']}/events").raise_for_status()  # ended: a finite stream
    run_path = f"/api/runs/{started['runId']}/events"
    session_path = f"/api/sessions/{started['sessionId']}/events"
    for bad in MALFORMED:
        try:  # servers read header bytes as latin-1: b"\xb2" is the "²" a route sees
            value = bad.encode("latin-1")
        except UnicodeEncodeError:
            value = bad.encode()
        res = client.get(run_path, headers={"Last-Event-ID": value})
        assert res.status_code == 400, (bad, res.status_code, res.text)
        res = client.get(session_path, headers={"Last-Event-ID": started["runId"].encode() + b":" + value})
        assert res.status_code == 400, (bad, res.status_code, res.text)
    for bad in ("12", "run-abc", ":3", "run-abc:"):  # a session stream's id is runId:seq
        assert client.get(session_path, headers={"Last-Event-ID": bad}).status_code == 400, bad


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=60) | st.from_regex(r"[0-9]{14,5000}", fullmatch=True))
def test_a_last_event_id_is_a_seq_or_invalid_params_never_anything_else(text: str) -> None:
    for parse in (lambda t: start_seq(None, t), session_resume):
        try:
            parse(text)
        except ServiceError as exc:
            assert exc.code == INVALID_PARAMS
    try:
        seq = start_seq(None, text)
    except ServiceError:
        return
    if not text.strip():  # absent: from the start
        assert seq == 0
    else:
        assert text.strip().isascii() and seq == int(text.strip()) + 1 <= 10**15


async def test_readers_that_leave_a_session_stream_leave_nothing_in_the_hub() -> None:
    hub = Hub()
    readers = [asyncio.create_task(hub.next_run(f"session-{n}")) for n in range(500)]
    same = [asyncio.create_task(hub.next_run("shared")) for _ in range(3)]
    await asyncio.sleep(0)  # one turn of the loop: every task has started and is waiting
    assert len(hub._session_waiters) == 501 and len(hub._session_waiters["shared"]) == 3
    for task in readers:
        task.cancel()
    same[0].cancel()
    await asyncio.gather(*readers, same[0], return_exceptions=True)
    assert set(hub._session_waiters) == {"shared"} and len(hub._session_waiters["shared"]) == 2
    hub.open("run-abcdef", "shared")  # the run the others waited for
    await asyncio.gather(*same[1:])
    assert hub._session_waiters == {} and hub.session_runs == {"shared": ["run-abcdef"]}
