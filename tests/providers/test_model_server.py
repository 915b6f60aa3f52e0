"""The local model server itself, and `kgent run` against it in a subprocess (the issue's "done when")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from kgent.testing import Fault, ModelServer


def test_unknown_route_is_a_json_404(model_server: ModelServer):
    response = httpx.post(f"{model_server.url}/v1/embeddings", json={})
    assert response.status_code == 404 and "no route" in response.json()["error"]["message"]
    assert model_server.requests == []


def test_control_endpoints(model_server: ModelServer):
    with httpx.Client(base_url=model_server.url) as client:
        client.post("/_kgent/script", json={"turns": [[{"text": "scripted remotely"}]]})
        client.post("/_kgent/fault", json={"kind": "status", "status": 503})
        first = client.post("/v1/chat/completions", json={"model": "m", "messages": []})
        second = client.post(
            "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "x"}]}
        )
        log = client.get("/_kgent/requests").json()
        client.post("/_kgent/reset")
    assert (
        first.status_code == 503 and '"remotely"' in second.text and second.text.endswith("data: [DONE]\n\n")
    )
    assert [json.loads(r["body"])["messages"] for r in log["requests"]] == [
        [],
        [{"role": "user", "content": "x"}],
    ]
    assert model_server.requests == [] and model_server.faults == []


def test_faults_apply_in_order_and_expire(model_server: ModelServer):
    model_server.fail(Fault.http_status(429, retry_after=2, times=2), Fault.http_status(500))
    with httpx.Client(base_url=model_server.url) as client:
        got = [client.post("/v1/messages", json={"messages": []}) for _ in range(4)]
    assert [r.status_code for r in got] == [429, 429, 500, 200]
    assert got[0].headers["retry-after"] == "2" and got[0].json()["error"]["type"] == "rate_limit_error"


def test_turn_is_chosen_by_assistant_messages_since_the_last_user_text():
    from kgent.testing.model_server import _turn_index

    tool_result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}
    assistant = {"role": "assistant", "content": []}
    assert (
        _turn_index(
            "anthropic", [{"role": "user", "content": "go"}, assistant, tool_result, assistant, tool_result]
        )
        == 2
    )
    assert (
        _turn_index(
            "anthropic", [{"role": "user", "content": "go"}, assistant, {"role": "user", "content": "more"}]
        )
        == 0
    )
    assert (
        _turn_index("openai", [{"role": "user", "content": "go"}, {"role": "assistant"}, {"role": "tool"}])
        == 1
    )


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_kgent_run_completes_a_multi_tool_task_over_http(tmp_path: Path, wire: str):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "sample.py").write_text("value = 1\nprint(value)\n")
    env = {**os.environ, "KGENT_STATE_DIR": str(tmp_path / "state")}
    server = subprocess.Popen(
        [sys.executable, "-m", "kgent.testing", "--script", "tool-loop"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        url = (server.stdout.readline() if server.stdout else "").strip()
        base = f"{url}/v1" if wire == "openai" else url
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "kgent.cli.main",
                "run",
                "--provider",
                wire,
                "--base-url",
                base,
                "--model",
                "m",
                "--mode",
                "full",
                "--workspace",
                str(workspace),
                "--json",
                "set value to 2",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    finally:
        server.terminate()
        server.wait(10)
    assert done.returncode == 0, done.stderr
    assert (workspace / "sample.py").read_text() == "value = 2\nprint(value)\n"
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    calls = [e["name"] for e in events if e.get("type") == "tool_call"]
    assert calls == ["read", "edit", "bash"]
    assert [e["status"] for e in events if e.get("type") == "run_end"] == ["settled"]


def test_emulated_anthropic_cache_looks_back_20_blocks_from_each_breakpoint():
    from kgent.testing.cache import PromptCache

    def body(n: int, *marked: int) -> dict:
        blocks = [{"type": "text", "text": f"block {i} " + "x" * 40} for i in range(n)]
        for i in marked:
            blocks[i]["cache_control"] = {"type": "ephemeral"}
        return {"messages": [{"role": "user", "content": blocks}]}

    cache = PromptCache(min_tokens=100)
    assert cache.account("anthropic", body(5, 4), 10_000).write == 0  # under the minimum: not cached
    first = cache.account("anthropic", body(12, 11), 10_000)
    assert (first.read, first.write > 100) == (0, True)
    near = cache.account("anthropic", body(31, 30), 10_000)  # 19 blocks on: the lookback finds block 11
    assert near.read == first.write and near.uncached == 10_000 - near.read - near.write
    far = cache.account("anthropic", body(60, 59), 10_000)  # 29 blocks past the newest cached one: a miss
    assert far.read == 0
    pinned = cache.account("anthropic", body(90, 59, 89), 10_000)  # a breakpoint where the last one was: a hit
    assert pinned.read == far.write


def test_emulated_automatic_caches_count_whole_units_of_the_shared_prefix():
    from kgent.testing.cache import PromptCache

    cache = PromptCache()
    messages = [{"role": "user", "content": "y" * 5000}]
    first = cache.account("openai", {"model": "deepseek-chat", "messages": messages}, 2000)
    again = cache.account("openai", {"model": "deepseek-chat", "messages": [*messages, {"role": "user"}]}, 2000)
    assert (first.read, again.read) == (0, 5000 // 256 * 64)
    assert again.openai_fields()["prompt_cache_miss_tokens"] == 2000 - again.read
    small = [{"role": "user", "content": "z" * 3000}]  # OpenAI caches prompts from 1024 tokens on only
    cache.account("openai", {"model": "gpt-4o", "messages": small}, 800)
    assert cache.account("openai", {"model": "gpt-4o", "messages": small}, 800).read == 0
