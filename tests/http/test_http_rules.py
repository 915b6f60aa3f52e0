"""Rules over HTTP (a real `kgent serve --http`): a project's rule file decides calls without an approval, and
GET /api/rules, POST /api/rules, POST /api/rules/remove list and change the rules."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run
from helpers import conforms
from kgent.core.paths import trust_file
from kgent.service.wire.events import AgentEventParams
from kgent.service.wire.results import AddRuleResult, RulesResult
from kgent.testing.http_server import HttpServer, read_events, serving


@pytest.fixture
def trusted(tmp_path: Path) -> Iterator[HttpServer]:
    ws = (tmp_path / "ws").resolve()
    (ws / ".kgent").mkdir(parents=True)
    (ws / "sample.py").write_text("value = 1\nprint(value)\n")
    config = tmp_path / "config"
    config.mkdir()
    trust_file({"KGENT_CONFIG_DIR": str(config)}).write_text(f'["{ws}"]')
    with serving(ws, tmp_path / "state", env={"KGENT_CONFIG_DIR": str(config)}) as srv:
        yield srv


def test_a_project_rule_file_decides_over_http(trusted: HttpServer) -> None:
    rules = trusted.workspace / ".kgent" / "config.toml"
    rules.write_text(
        '[permissions]\nallow = ["edit(sample.py)", "bash(grep *)", "bash(python3 sample.py)"]\n'
    )
    with trusted.client() as client:
        started = run(client, "tool-loop")
        events = [p for _, p in read_events(client, f"/api/runs/{started['runId']}/events")]
    for params in events:
        conforms(AgentEventParams, params)
    types = [p["event"]["type"] for p in events]
    assert "permission_request" not in types and events[-1]["event"]["status"] == "settled"
    resolved = [p["event"] for p in events if p["event"]["type"] == "permission_resolved"]
    assert [r["source"] for r in resolved] == ["project_rule", "project_rule"]
    assert all("project rule" in r["reason"] and r["label"] == r["reason"] for r in resolved)


def test_the_rules_routes(trusted: HttpServer) -> None:
    workspace = str(trusted.workspace)
    with trusted.client() as client:
        added = client.post(
            "/api/rules",
            json={
                "workspace": workspace,
                "rule": "bash(npm test *)",
                "decision": "allow",
                "scope": "project",
            },
        )
        assert added.status_code == 200, added.text
        conforms(AddRuleResult, added.json())
        listed = client.get("/api/rules", params={"workspace": workspace})
        conforms(RulesResult, listed.json())
        assert [(r["rule"], r["scope"]) for r in listed.json()["rules"]] == [("bash(npm test *)", "project")]
        assert listed.json()["projectTrusted"] is True
        path = trusted.workspace / ".kgent" / "config.toml"
        assert tomllib.loads(path.read_text()) == {"permissions": {"allow": ["bash(npm test *)"]}}
        bad = client.post(
            "/api/rules",
            json={"workspace": workspace, "rule": "bash(npx *)", "decision": "allow", "scope": "user"},
        )
        assert bad.status_code == 400 and "only exact commands" in bad.json()["error"]["message"]
        body = {"workspace": workspace, "rule": "bash(npm test *)", "decision": "allow", "scope": "project"}
        assert client.post("/api/rules/remove", json=body).json() == {"removed": True}
        assert client.post("/api/rules/remove", json=body).json() == {"removed": False}
        outside = client.get("/api/rules", params={"workspace": "/"})
        assert outside.status_code == 403
