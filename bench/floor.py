"""The floor: a minimal coding agent that `bench/ratios.py` compares Kgent against (a reference, not a product part).

httpx streaming against an OpenAI-compatible or an Anthropic endpoint, the tools read / edit / bash, every message
appended to a JSONL log with one fsync. No retries, permissions, sandbox, sessions or compaction. `--asyncio`: the
same agent on asyncio and httpx.AsyncClient.

    python bench/floor.py --wire openai --base-url http://127.0.0.1:PORT/v1 --log run.jsonl PROMPT
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Generator
from typing import Any

import httpx

TOOLS = {
    "read": ("Read a file.", ["path"]),
    "edit": ("Replace oldText by newText in a file.", ["path", "oldText", "newText"]),
    "bash": ("Run a shell command.", ["command"]),
}


def schema(names: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": names}


def run_tool(workspace: str, name: str, args: dict[str, str]) -> str:
    try:
        if name == "bash":
            done = subprocess.run(args["command"], shell=True, cwd=workspace, capture_output=True, text=True)
            return f"{done.stdout}{done.stderr}(exit {done.returncode})"
        path = os.path.join(workspace, args["path"])
        with open(path) as f:
            text = f.read()
        if name == "read":
            return text
        if args["oldText"] not in text:
            return "error: oldText not found"
        with open(path, "w") as f:
            f.write(text.replace(args["oldText"], args["newText"], 1))
        return "edited"
    except (OSError, KeyError) as exc:
        return f"error: {exc}"


class Stream:
    """One streamed answer's text and tool calls, fed the SSE lines of either wire."""

    def __init__(self, wire: str) -> None:
        self.wire, self.text, self.calls, self.by_index = wire, "", [], {}

    def feed(self, line: str) -> None:
        if not line.startswith("data: ") or line == "data: [DONE]":
            return
        event = json.loads(line[6:])
        if self.wire == "openai":
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or {}
                self.say(delta.get("content") or "")
                for tc in delta.get("tool_calls") or []:
                    call = self.by_index.get(tc["index"])
                    if call is None:
                        call = self.by_index[tc["index"]] = {"id": "", "name": "", "args": ""}
                        self.calls.append(call)
                    call["id"] = tc.get("id") or call["id"]
                    call["name"] += (tc.get("function") or {}).get("name") or ""
                    call["args"] += (tc.get("function") or {}).get("arguments") or ""
            return
        block, delta = event.get("content_block") or {}, event.get("delta") or {}
        if block.get("type") == "tool_use":
            self.calls.append({"id": block["id"], "name": block["name"], "args": ""})
        self.say(delta.get("text") or "")
        if delta.get("type") == "input_json_delta":
            self.calls[-1]["args"] += delta["partial_json"]

    def say(self, text: str) -> None:
        self.text += text
        sys.stdout.write(text)


def request(wire: str, url: str, body: dict[str, Any]) -> dict[str, Any]:
    """The streamed request of one turn: httpx.stream's arguments."""
    if wire == "openai":
        tools = [
            {"type": "function", "function": {"name": n, "description": d, "parameters": schema(a)}}
            for n, (d, a) in TOOLS.items()
        ]
        return {"method": "POST", "url": f"{url}/chat/completions", "json": {**body, "tools": tools}}
    tools = [{"name": n, "description": d, "input_schema": schema(a)} for n, (d, a) in TOOLS.items()]
    return {
        "method": "POST",
        "url": f"{url}/v1/messages",
        "json": {**body, "tools": tools, "max_tokens": 4096},
        "headers": {"anthropic-version": "2023-06-01"},
    }


def loop(
    wire: str, model: str, workspace: str, log: Any, prompt: str, max_turns: int
) -> Generator[dict[str, Any], Stream, int]:
    """The agent: yields each turn's request body, is sent the answer; returns the model calls made."""
    messages: list[dict[str, Any]] = []

    def add(message: dict[str, Any]) -> None:
        messages.append(message)
        log.write(json.dumps(message) + "\n")
        log.flush()
        os.fsync(log.fileno())

    add({"role": "user", "content": prompt})
    for turn in range(1, max_turns + 1):
        answer = yield {"model": model, "messages": messages, "stream": True}
        text, calls = answer.text, answer.calls
        results = [run_tool(workspace, c["name"], json.loads(c["args"] or "{}")) for c in calls]
        if wire == "openai":
            tool_calls = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["args"]}}
                for c in calls
            ]
            add(
                {
                    "role": "assistant",
                    "content": text or None,
                    **({"tool_calls": tool_calls} if calls else {}),
                }
            )
            for c, out in zip(calls, results, strict=True):
                add({"role": "tool", "tool_call_id": c["id"], "content": out})
        else:
            uses = [
                {"type": "tool_use", "id": c["id"], "name": c["name"], "input": json.loads(c["args"] or "{}")}
                for c in calls
            ]
            add({"role": "assistant", "content": ([{"type": "text", "text": text}] if text else []) + uses})
            if calls:
                results_block = [
                    {"type": "tool_result", "tool_use_id": c["id"], "content": out}
                    for c, out in zip(calls, results, strict=True)
                ]
                add({"role": "user", "content": results_block})
        if not calls:
            return turn
    return max_turns


def agent(
    wire: str,
    url: str,
    model: str,
    workspace: str,
    log_path: str,
    prompt: str,
    max_turns: int,
    client: Any = None,
) -> int:
    """Run the task (on `client`, else a new httpx.Client); returns the model calls made."""
    with (
        open(log_path, "a") as log,
        contextlib.nullcontext(client) if client else httpx.Client(timeout=120) as client,
    ):
        steps = loop(wire, model, workspace, log, prompt, max_turns)
        try:
            body = next(steps)
            while True:
                answer = Stream(wire)
                with client.stream(**request(wire, url, body)) as response:
                    response.raise_for_status()
                    for line in response.iter_lines():
                        answer.feed(line)
                body = steps.send(answer)
        except StopIteration as done:
            return int(done.value)


async def agent_asyncio(
    wire: str, url: str, model: str, workspace: str, log_path: str, prompt: str, max_turns: int
) -> int:
    """The same agent on asyncio and httpx.AsyncClient (what an agent that serves several sessions at once runs on;
    bench/firstrun.py measures what that costs against the synchronous floor)."""
    async with httpx.AsyncClient(timeout=120) as client:
        with open(log_path, "a") as log:  # noqa: ASYNC230 - blocking, as the synchronous floor writes it
            steps = loop(wire, model, workspace, log, prompt, max_turns)
            try:
                body = next(steps)
                while True:
                    answer = Stream(wire)
                    async with client.stream(**request(wire, url, body)) as response:
                        response.raise_for_status()
                        async for line in response.aiter_lines():
                            answer.feed(line)
                    body = steps.send(answer)
            except StopIteration as done:
                return int(done.value)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--wire", choices=("openai", "anthropic"), default="openai")
    p.add_argument("--base-url", required=True)
    p.add_argument("--model", default="floor")
    p.add_argument("--workspace", default=os.getcwd())
    p.add_argument("--log", default="floor.jsonl")
    p.add_argument("--max-turns", type=int, default=1000)
    p.add_argument("--asyncio", action="store_true", help="run on asyncio and httpx.AsyncClient")
    p.add_argument("prompt")
    a = p.parse_args(argv)
    task = (a.wire, a.base_url.rstrip("/"), a.model, a.workspace, a.log, a.prompt, a.max_turns)
    if a.asyncio:
        import asyncio

        turns = asyncio.run(agent_asyncio(*task))
    else:
        turns = agent(*task)
    print(f"\n{turns} model calls", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
