"""The method table: every method says what each front offers or why not, and the daemon's dispatch, the HTTP routes,
protocol-http.md and docs/acp.md agree with it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from acp import meta

from kgent.daemon.server import NOTIFICATIONS, REQUESTS, SENT
from kgent.http.app import create_app
from kgent.http.guard import HttpConfig
from kgent.http.routes import built, fastapi_path
from kgent.service.wire.methods import BY_NAME, METHODS, Absent, Acp, Http, Method

ROOT = Path(__file__).resolve().parents[2]


def _section(path: str, title: str) -> str:
    doc = (ROOT / path).read_text(encoding="utf-8")
    start = doc.index(f"\n## {title}\n")
    end = doc.find("\n## ", start + 1)
    return doc[start : end if end != -1 else None]


def _rows(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("|") and not line.startswith("|---")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines[1:]]


def _names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell.split(" (")[0])


def check_fronts(methods: tuple[Method, ...]) -> list[str]:
    """What is wrong with a table: a front that lacks a method without saying why, or a route it cannot build."""
    problems = []
    for m in methods:
        for front, offer in (("http", m.http), ("acp", m.acp)):
            if isinstance(offer, Absent) and not offer.why.strip():
                problems.append(f"{m.name}: {front} lacks it without saying why")
            if offer == ():
                problems.append(f"{m.name}: {front} lists no route and no reason")
        for route in m.http if isinstance(m.http, tuple) else ():
            if not route.built and not route.why.strip():
                problems.append(f"{m.name}: {route.path} is hand-written without saying why")
            if route.built and (m.call is None or m.params is None):
                problems.append(f"{m.name}: {route.path} has no service call to build from")
        if isinstance(m.acp, Acp):
            known = set(meta.AGENT_METHODS.values()) | set(meta.CLIENT_METHODS.values())
            for name in m.acp.method.split(", "):
                if name not in known:
                    problems.append(f"{m.name}: ACP has no method {name}")
    return problems


def test_every_front_offers_each_method_or_says_why() -> None:
    assert check_fronts(METHODS) == []
    served = {m.name for m in METHODS if m.call is not None}
    assert served == {m.name for m in METHODS if m.direction == "client → daemon" and m.kind == "request"}


@pytest.mark.parametrize(
    "broken",
    [
        Method(
            name="x/y", direction="client → daemon", kind="request", http=Absent(""), acp=Acp("initialize")
        ),
        Method(name="x/y", direction="client → daemon", kind="request", http=(), acp=Acp("initialize")),
        Method(name="x/y", direction="client → daemon", kind="request", http=Absent("no"), acp=Absent(" ")),
        Method(
            name="x/y", direction="client → daemon", kind="request", http=Absent("no"), acp=Acp("session/x")
        ),
        Method(
            name="x/y",
            direction="client → daemon",
            kind="request",
            http=(Http("POST", "/api/x", built=False),),
            acp=Absent("no"),
        ),
        Method(
            name="x/y",
            direction="client → daemon",
            kind="request",
            http=(Http("POST", "/x"),),
            acp=Absent("n"),
        ),
    ],
)
def test_a_front_without_a_reason_is_caught(broken: Method) -> None:
    assert len(check_fronts((broken,))) == 1


def test_the_daemon_dispatches_the_table() -> None:
    assert list(REQUESTS) == [
        m.name for m in METHODS if m.direction == "client → daemon" and m.kind == "request"
    ]
    assert set(NOTIFICATIONS) == {"exit", "$/cancelRequest"}
    assert set(SENT) == {m.name for m in METHODS if m.direction != "client → daemon"}


def test_http_serves_and_documents_every_route_of_the_table() -> None:
    app = create_app(HttpConfig(token="t", workspace_roots=(str(ROOT),)), {})
    paths = app.openapi()["paths"]
    served = {(verb.upper(), path) for path, ops in paths.items() for verb in ops}
    offered = set()
    for m in METHODS:
        for route in m.http if isinstance(m.http, tuple) else ():
            offered.add((route.verb, fastapi_path(route.path)))
    assert offered <= served
    assert {m.name for m, _ in built()} >= {"agent/clearQueue", "agent/review", "agent/applyReview"}
    api = {(verb, path) for verb, path in served if path.startswith("/api/")}
    # no method of protocol.md: the roots and the project picker's browsing (the web client's), a run's replay state,
    # a session's stored images
    beside_the_table = {
        ("GET", "/api/workspaces"),
        ("GET", "/api/directories"),
        ("GET", "/api/runs/{run_id}"),
        ("GET", "/api/sessions/{session_id}/images/{sha256}"),  # the web client's thumbnails
    }
    assert api - offered == beside_the_table
    review = paths["/api/sessions/{session_id}/review"]
    assert [p["name"] for p in review["get"]["parameters"]] == ["session_id", "runId"]
    body = review["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert set(body["properties"]) == {"accept", "reject"} and "required" not in body
    assert review["post"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/ApplyReviewResult"
    )


def _doc_route(cell: str) -> tuple[str, str]:
    verb, path = cell.strip("`").split(" ", 1)
    path = re.sub(r"\[.*?\]|\?.*$", "", path).replace("/sessions/{id}", "/sessions/{sessionId}")
    return verb, path


def test_protocol_http_md_lists_every_method_of_the_table() -> None:
    routes = _section("protocol-http.md", "Routes")
    rows = _rows(routes)
    documented: dict[str, set[tuple[str, str]]] = {}
    for cells in rows:
        for name in _names(cells[0]):
            documented.setdefault(name, set()).add(_doc_route(cells[1]))
    prose = "\n".join(line for line in routes.splitlines() if not line.startswith("|"))
    for m in METHODS:
        if isinstance(m.http, Absent):
            assert m.name not in documented, m.name
            assert f"`{m.name}`" in prose, f"protocol-http.md does not say why {m.name} has no route"
        else:
            assert documented.get(m.name) == {(r.verb, r.path) for r in m.http}, m.name


def test_acp_md_lists_every_method_of_the_table() -> None:
    rows = _rows(_section("docs/acp.md", "protocol.md's methods over ACP"))
    documented = {name: cells[1] for cells in rows for name in _names(cells[0])}
    assert set(documented) == {m.name for m in METHODS}
    for m in METHODS:
        if isinstance(m.acp, Absent):
            assert documented[m.name] == f"not offered: {m.acp.why}", m.name
        else:
            assert documented[m.name] == ", ".join(f"`{n}`" for n in m.acp.method.split(", ")), m.name


def test_the_generated_typescript_carries_the_table() -> None:
    ts = (ROOT / "editors/vscode/src/wire.generated.ts").read_text(encoding="utf-8")
    block = ts[ts.index("export interface Methods {") :]
    listed = re.findall(r'^  ("[^"]+"): \{$', block, re.M)
    assert [json.loads(name) for name in listed] == [m.name for m in METHODS]
    assert (
        '"agent/review": {\n    direction: "client → daemon"; kind: "request";\n    params: ReviewParams;'
        in block
    )


def test_serving_loads_no_event_model() -> None:
    code = "import sys, kgent.daemon.server, kgent.http.routes\nprint('kgent.service.wire.events' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "False"  # the table names them; the schema and the tests resolve them
    assert BY_NAME["agent/event"].params.__name__ == "AgentEventParams"
