"""The floor: a minimal coding agent that `bench/ratios.py` compares Kgent against (a reference, not a product part).

httpx streaming against an OpenAI-compatible or an Anthropic endpoint, the tools read / edit / bash, every message
appended to a JSONL log with one fsync. No retries, permissions, sandbox, sessions or compaction.

    python bench/floor.py --wire openai --base-url http://127.0.0.1:PORT/v1 --log run.jsonl PROMPT
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
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


def openai_turn(client: httpx.Client, url: str, body: dict[str, Any]) -> tuple[str, list[dict[str, str]]]:
    body["tools"] = [
        {"type": "function", "function": {"name": n, "description": d, "parameters": schema(a)}}
        for n, (d, a) in TOOLS.items()
    ]
    text, calls = "", {}
    with client.stream("POST", f"{url}/chat/completions", json=body) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[6:]).get("choices") or []:
                delta = choice.get("delta") or {}
                text += delta.get("content") or ""
                sys.stdout.write(delta.get("content") or "")
                for tc in delta.get("tool_calls") or []:
                    call = calls.setdefault(tc["index"], {"id": "", "name": "", "args": ""})
                    call["id"] = tc.get("id") or call["id"]
                    call["name"] += (tc.get("function") or {}).get("name") or ""
                    call["args"] += (tc.get("function") or {}).get("arguments") or ""
    return text, list(calls.values())


def anthropic_turn(client: httpx.Client, url: str, body: dict[str, Any]) -> tuple[str, list[dict[str, str]]]:
    body["tools"] = [{"name": n, "description": d, "input_schema": schema(a)} for n, (d, a) in TOOLS.items()]
    body["max_tokens"] = 4096
    text, calls = "", []
    with client.stream(
        "POST", f"{url}/v1/messages", json=body, headers={"anthropic-version": "2023-06-01"}
    ) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line.startswith("data: "):
                continue
            event = json.loads(line[6:])
            block, delta = event.get("content_block") or {}, event.get("delta") or {}
            if block.get("type") == "tool_use":
                calls.append({"id": block["id"], "name": block["name"], "args": ""})
            text += delta.get("text") or ""
            sys.stdout.write(delta.get("text") or "")
            if delta.get("type") == "input_json_delta":
                calls[-1]["args"] += delta["partial_json"]
    return text, calls


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
    messages: list[dict[str, Any]] = []
    with (
        open(log_path, "a") as log,
        contextlib.nullcontext(client) if client else httpx.Client(timeout=120) as client,
    ):

        def add(message: dict[str, Any]) -> None:
            messages.append(message)
            log.write(json.dumps(message) + "\n")
            log.flush()
            os.fsync(log.fileno())

        add({"role": "user", "content": prompt})
        for turn in range(1, max_turns + 1):
            body = {"model": model, "messages": messages, "stream": True}
            text, calls = (openai_turn if wire == "openai" else anthropic_turn)(client, url, body)
            results = [run_tool(workspace, c["name"], json.loads(c["args"] or "{}")) for c in calls]
            if wire == "openai":
                tool_calls = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["args"]},
                    }
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
                    {
                        "type": "tool_use",
                        "id": c["id"],
                        "name": c["name"],
                        "input": json.loads(c["args"] or "{}"),
                    }
                    for c in calls
                ]
                add(
                    {
                        "role": "assistant",
                        "content": ([{"type": "text", "text": text}] if text else []) + uses,
                    }
                )
                if calls:
                    tool_results = [
                        {"type": "tool_result", "tool_use_id": c["id"], "content": out}
                        for c, out in zip(calls, results, strict=True)
                    ]
                    add({"role": "user", "content": tool_results})
            if not calls:
                return turn
    return max_turns


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--wire", choices=("openai", "anthropic"), default="openai")
    p.add_argument("--base-url", required=True)
    p.add_argument("--model", default="floor")
    p.add_argument("--workspace", default=os.getcwd())
    p.add_argument("--log", default="floor.jsonl")
    p.add_argument("--max-turns", type=int, default=1000)
    p.add_argument("prompt")
    a = p.parse_args(argv)
    turns = agent(a.wire, a.base_url.rstrip("/"), a.model, a.workspace, a.log, a.prompt, a.max_turns)
    print(f"\n{turns} model calls", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
