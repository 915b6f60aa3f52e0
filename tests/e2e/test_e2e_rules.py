"""Rules through the stdio daemon (a real subprocess): a project's rule file decides calls without asking, an
'always in this project' answer writes it and lasts into the next session, and agent/rules, agent/addRule,
agent/removeRule list and change the rules of every scope."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path
from typing import Any

import pytest
from kgent_host import KgentHost, select
from pygls.exceptions import JsonRpcException

from conftest import Spawn

COMPOUND = (
    "grep -n 'value = 2' sample.py && python3 sample.py"  # tool-loop's check: the compound command
)


def _project(workspace: Path, text: str) -> Path:
    path = workspace / ".kgent" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


async def _daemon(spawn: Spawn, tmp_path: Path, **settings: Any) -> KgentHost:
    host = await spawn(initialize=False, state_dir=str(tmp_path / "state"))
    await host.initialize(**settings)
    return host


async def test_a_project_rule_file_decides_without_asking(
    spawn: Spawn, tmp_path: Path, workspace: Path
) -> None:
    _project(
        workspace,
        '[permissions]\nallow = ["edit(sample.py)", "bash(grep *)", "bash(python3 sample.py)"]\n',
    )
    host = await _daemon(spawn, tmp_path, trustProjectExtensions=True)
    run_id, end, _ = await host.run_to_end(
        prompt="Set value to 2", workspace=str(workspace), model="tool-loop", mode="ask"
    )
    assert end["status"] == "settled"
    assert host.permission_requests == []
    resolved = host.of(run_id, "permission_resolved")
    assert [(r["source"], r["approved"]) for r in resolved] == [("project_rule", True)] * 2
    assert resolved[0]["label"] == "allowed by the project rule `edit(sample.py)`"
    assert "project rule `edit(sample.py)`" in resolved[0]["reason"]
    assert "project rules `bash(grep *)`, `bash(python3 sample.py)`" in resolved[1]["reason"]


async def test_an_untrusted_projects_allows_are_ignored_and_its_denies_kept(
    spawn: Spawn, tmp_path: Path, workspace: Path
) -> None:
    _project(workspace, '[permissions]\nallow = ["edit(sample.py)"]\ndeny = ["bash(python3 *)"]\n')
    host = await _daemon(spawn, tmp_path)
    host.policy = select("allow_once")
    run_id, end, _ = await host.run_to_end(
        prompt="Set value to 2", workspace=str(workspace), model="tool-loop", mode="ask"
    )
    assert end["status"] == "settled"
    assert [p["toolCall"]["name"] for p in host.permission_requests] == [
        "edit"
    ]  # asked: the allow is ignored
    denied = host.of(run_id, "permission_resolved")[-1]
    assert not denied["approved"] and "denied by the project rule `bash(python3 *)`" in denied["reason"]


async def test_always_in_this_project_lasts_into_the_next_session(
    spawn: Spawn, tmp_path: Path, workspace: Path
) -> None:
    host = await _daemon(spawn, tmp_path, trustProjectExtensions=True)
    host.policy = select("allow_always_project")
    await host.run_to_end(prompt="Set value to 2", workspace=str(workspace), model="tool-loop", mode="ask")
    asked = host.permission_requests
    assert [p["toolCall"]["name"] for p in asked] == ["edit", "bash"]
    bash_option = next(o for o in asked[1]["options"] if o["optionId"] == "allow_always_project")
    assert bash_option == {
        "optionId": "allow_always_project",
        "kind": "allow_always",
        "name": "Always allow `grep …` and `python3 sample.py` in this project",
        "scope": "project",
        "rules": [
            {"rule": "bash(grep *)", "text": "allow `grep` with any arguments in this project"},
            {
                "rule": "bash(python3 sample.py)",
                "text": "allow `python3 sample.py` (exactly this command) in this project",
            },
        ],
    }
    data = tomllib.loads((workspace / ".kgent" / "config.toml").read_text())
    assert data == {"permissions": {"allow": ["edit(sample.py)", "bash(grep *)", "bash(python3 sample.py)"]}}
    (workspace / "sample.py").write_text("value = 1\nprint(value)\n")
    host.permission_requests.clear()
    _, end, _ = await host.run_to_end(prompt="Again", workspace=str(workspace), model="tool-loop", mode="ask")
    assert end["status"] == "settled" and host.permission_requests == []


async def test_the_rules_methods_list_add_and_remove(spawn: Spawn, tmp_path: Path, workspace: Path) -> None:
    _project(
        workspace, '# the team\'s rules\n[permissions]\nallow = ["bash(npm test *)", "bash(python3 *)"]\n'
    )
    host = await _daemon(spawn, tmp_path, trustProjectExtensions=True)
    host.policy = select("allow_always")
    _, _, _ = await host.run_to_end(
        prompt="Set value to 2", workspace=str(workspace), model="tool-loop", mode="ask"
    )
    session = host.permission_requests[0]["sessionId"]
    listing = await host.call("agent/rules", {"workspace": str(workspace)})
    assert listing["projectTrusted"] is True
    assert listing["files"]["project"] == str(workspace / ".kgent" / "config.toml")
    assert [(r["rule"], r["decision"], r["scope"], r.get("sessionId")) for r in listing["rules"]] == [
        ("bash(npm test *)", "allow", "project", None),
        ("edit(sample.py)", "allow", "session", session),
        ("bash(grep *)", "allow", "session", session),
        ("bash(python3 sample.py)", "allow", "session", session),
    ]
    assert len(listing["problems"]) == 1 and "bash(python3 *)" in listing["problems"][0]
    added = await host.call(
        "agent/addRule",
        {"workspace": str(workspace), "rule": "bash(git push:*)", "decision": "deny", "scope": "project"},
    )
    assert added["rule"]["rule"] == "bash(git push *)" and added["rule"]["text"].startswith("deny `git push`")
    text = (workspace / ".kgent" / "config.toml").read_text()
    assert text.startswith("# the team's rules\n[permissions]\n") and '"bash(git push *)"' in text
    user = await host.call(
        "agent/addRule",
        {
            "workspace": str(workspace),
            "rule": "web_fetch(docs.python.org)",
            "decision": "allow",
            "scope": "user",
        },
    )
    assert user["rule"]["file"] == str(tmp_path / "state" / "config" / "config.toml")
    removed = await host.call(
        "agent/removeRule",
        {
            "workspace": str(workspace),
            "rule": "bash(grep *)",
            "decision": "allow",
            "scope": "session",
            "sessionId": session,
        },
    )
    assert removed == {"removed": True}
    listing = await host.call("agent/rules", {"workspace": str(workspace)})
    assert ("bash(grep *)", "session") not in [(r["rule"], r["scope"]) for r in listing["rules"]]
    with pytest.raises(JsonRpcException) as bad:
        await host.call(
            "agent/addRule",
            {"workspace": str(workspace), "rule": "bash(python3 *)", "decision": "allow", "scope": "project"},
        )
    assert bad.value.code == -32602 and "only exact commands" in bad.value.message


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "untrusted"])
async def test_a_second_session_of_the_same_work_asks_nothing(tmp_path: Path, trusted: bool) -> None:
    """bench/rules.py's measurement, pinned: 20 calls of ordinary work, the broadest 'always' answer each time,
    then the same 20 calls in a new session; in a project the user does not trust, the project answers are kept in
    the user's own file for it, and last as well."""
    spec = importlib.util.spec_from_file_location(
        "bench_rules", Path(__file__).parents[2] / "bench" / "rules.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = await bench.measure(tmp_path, trusted=trusted)
    first, second = result["first_session"], result["second_session"]
    assert first["status"] == second["status"] == "settled"
    assert 0 < first["approvals"] < 20 and len(set(first["asked"])) == len(first["asked"])  # none asked twice
    assert "bash(python3 -m unittest -q)" in [r["rule"] for r in result["rules_created"]]
    assert second["approvals"] == 0 and second["repeats"] == []
    (home,) = {r["file"] for r in result["rules_created"] if r["scope"] == "project"}
    if trusted:
        assert home == str(tmp_path / "ws" / ".kgent" / "config.toml")
    else:
        assert home.startswith(str(tmp_path / "config" / "projects" / "ws-"))
