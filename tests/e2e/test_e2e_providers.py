"""The daemon with real providers over real HTTP: both wire formats against the local model server, a full run with
approvals each, and a compaction whose summary request fails cleanly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kgent_host import KgentHost
from pygls.exceptions import JsonRpcException

from kgent.testing.model_server import ModelServer


@pytest.fixture(scope="module")
def model_server() -> Iterator[ModelServer]:
    with ModelServer("hello") as server:
        yield server


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_full_run_over_http(spawn: Any, workspace: Path, model_server: ModelServer, wire: str) -> None:
    model_server.script = "tool-loop"
    h: KgentHost = await spawn(KGENT_PROVIDER=wire, KGENT_BASE_URL=model_server.base_url(wire), KGENT_MODEL="test-model")
    run_id, end, _ = await h.run_to_end(prompt="Set value to 2", workspace=str(workspace))
    assert end["status"] == "settled" and end["changedPaths"] == ["sample.py"], end
    start = h.of(run_id)[0]
    assert (start["provider"], start["model"]) == (wire, "test-model")
    assert [r["toolCall"]["name"] for r in h.permission_requests] == ["edit", "bash"]
    assert (workspace / "sample.py").read_text() == "value = 2\nprint(value)\n"


async def test_a_failed_summary_fails_the_compaction_cleanly(
    spawn: Any, workspace: Path, tmp_path: Path, model_server: ModelServer
) -> None:
    model_server.script = [[{"text": "lorem ipsum dolor sit amet " * 5000}]]  # past the 20k tokens kept
    h: KgentHost = await spawn(KGENT_PROVIDER="openai", KGENT_BASE_URL=model_server.openai_base_url, KGENT_MODEL="m")
    _, end, _ = await h.run_to_end(prompt="Write a lot", workspace=str(workspace))
    sid = end["sessionId"]
    model_server.script = [[{"text": "A short answer."}]]
    await h.run_to_end(prompt="Short one", sessionId=sid)
    before = await h.call("agent/session", {"sessionId": sid})
    with pytest.raises(JsonRpcException) as failed:  # the model answers with prose, not the eight sections
        await h.call("agent/compact", {"sessionId": sid})
    assert failed.value.code == -32005 and failed.value.data == {"code": "compaction_failed"}
    after = await h.call("agent/session", {"sessionId": sid})
    assert after["entries"] == before["entries"]  # nothing was written


async def test_tokens_cache_and_cost_reach_the_editor(spawn: Any, workspace: Path, model_server: ModelServer) -> None:
    model_server.script = "tool-loop"
    h: KgentHost = await spawn(
        KGENT_PROVIDER="anthropic", KGENT_BASE_URL=model_server.anthropic_base_url, KGENT_MODEL="claude-sonnet-4-5"
    )
    _, end, events = await h.run_to_end(prompt="Set value to 2", workspace=str(workspace))
    usage = [e for e in events if e["type"] == "usage"]
    assert len(usage) == end["turns"] and usage[-1]["total"] == end["usage"]
    assert usage[0]["turn"]["cacheWriteTokens"] > 0 and usage[1]["turn"]["cacheReadTokens"] > 0
    assert end["usage"]["cost"]["currency"] == "USD" and end["usage"]["cost"]["amount"] > 0
    session = await h.call("agent/session", {"sessionId": end["sessionId"]})
    assert session["usage"] == end["usage"]  # one run so far: the session's totals are the run's


async def test_a_cost_limit_ends_the_run_failed(spawn: Any, workspace: Path, model_server: ModelServer) -> None:
    model_server.script = "tool-loop"
    h: KgentHost = await spawn(
        KGENT_PROVIDER="anthropic", KGENT_BASE_URL=model_server.anthropic_base_url, KGENT_MODEL="claude-sonnet-4-5"
    )
    _, end, events = await h.run_to_end(prompt="Set value to 2", workspace=str(workspace), costLimit=0.0001)
    assert (end["status"], end["stopReason"], end["error"]["code"], end["turns"]) == ("failed", "cost_limit", "cost_limit", 0)
    assert "limit of $0.0001" in end["error"]["message"] and not [e for e in events if e["type"] == "usage"]
    with pytest.raises(JsonRpcException) as bad:
        await h.call("agent/run", {"prompt": "x", "workspace": str(workspace), "costLimit": -1})
    assert bad.value.code == -32602
    unpriced: KgentHost = await spawn(KGENT_PROVIDER="scripted", KGENT_MODEL="hello", KGENT_COST_LIMIT="1")
    with pytest.raises(JsonRpcException) as no_price:
        await unpriced.call("agent/run", {"prompt": "x", "workspace": str(workspace)})
    assert no_price.value.code == -32001 and "needs the price of model 'hello'" in no_price.value.message
