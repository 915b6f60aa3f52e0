"""ScriptedProvider: a deterministic model that plays scripts of streamed text, thinking and tool calls.

A script is a list of turns; a turn is a list of steps:
  {"thinking": "..."}  {"text": "...", "chunks": N?}  {"tool": "read", "args": {...}, "id": "..."?}
  {"sleep": seconds}  {"error": "message", "code": "provider_unavailable"?}  {"usage": {"input": n, "output": n}}
Which turn plays: one past the turn of the latest scripted reply since the last user message (0 if none), so a
script restarts after a steering or follow-up message; past the end, the last turn repeats (make it a text answer).
Compaction answers its summary requests without a model (see `model_free_summaries`, kgent.context.summarizing).
Built-in scripts live in kgent/scripts/NAME.json; `--script` also takes a path to a JSON file.
A script file may add `"prompts": {"<text>": [turns]}`: a conversation whose first user message is that text plays
those turns instead (how a scripted `task` tool call gives its sub-agent a script of its own).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import Any

from kgent.core.errors import ConfigError
from kgent.core.messages import AssistantMessage, ToolCall, Usage, UserMessage
from kgent.providers.base import (
    ProviderRequest,
    StreamDone,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallStart,
)

Script = list[list[dict[str, Any]]]


def builtin_scripts() -> list[str]:
    """Names of the scripts shipped in the package."""
    files = resources.files("kgent").joinpath("scripts")
    return sorted(p.name.removesuffix(".json") for p in files.iterdir() if p.name.endswith(".json"))


def load_script(name_or_path: str) -> Script:
    """A built-in script by name, or a JSON file (a list of turns, or {"turns": [...]})."""
    return _turns(name_or_path, _load(name_or_path))


def load_prompts(name_or_path: str) -> dict[str, Script]:
    """A script file's per-prompt scripts (`"prompts"`; empty when it has none)."""
    data = _load(name_or_path)
    prompts = data.get("prompts", {}) if isinstance(data, dict) else {}
    if not isinstance(prompts, dict):
        raise ConfigError(f"script {name_or_path!r}: 'prompts' must map prompt texts to lists of turns")
    return {text: _turns(f"{name_or_path}: {text}", turns) for text, turns in prompts.items()}


def _load(name_or_path: str) -> Any:
    path = Path(name_or_path)
    if name_or_path.endswith(".json") and path.is_file():
        text = path.read_text(encoding="utf-8")
    else:
        res = resources.files("kgent").joinpath("scripts", f"{name_or_path}.json")
        if not res.is_file():
            raise ConfigError(
                f"unknown script {name_or_path!r}: use one of {', '.join(builtin_scripts())} or a path to a .json file"
            )
        text = res.read_text(encoding="utf-8")
    return json.loads(text)


def _turns(name_or_path: str, data: Any) -> Script:
    turns = data["turns"] if isinstance(data, dict) else data
    if not isinstance(turns, list) or not turns or not all(isinstance(t, list) for t in turns):
        raise ConfigError(f"script {name_or_path!r} must be a non-empty list of turns (lists of steps)")
    return turns


def text_chunks(text: str, n: int | None) -> list[str]:
    """The pieces a text step streams in: word by word (spaces kept), or `n` about equal pieces."""
    if n is None:  # word by word, keeping the spaces
        parts, current = [], ""
        for ch in text:
            current += ch
            if ch == " ":
                parts.append(current)
                current = ""
        if current:
            parts.append(current)
        return parts
    size = max(1, -(-len(text) // max(1, n)))
    return [text[i : i + size] for i in range(0, len(text), size)]


class ScriptedProvider:
    name = "scripted"
    # A scripted model cannot write a summary: compaction answers its summary requests itself (deterministically).
    model_free_summaries = True
    # It takes images (and ignores them), so fronts can be tested with images without a vision model.
    vision = True

    def __init__(self, script: Script | str = "hello", *, model: str | None = None) -> None:
        self.script: Script = load_script(script) if isinstance(script, str) else script
        self.prompts: dict[str, Script] = load_prompts(script) if isinstance(script, str) else {}
        self.model = model or (script if isinstance(script, str) else "script")
        self.requests: list[ProviderRequest] = []

    def _turn(self, request: ProviderRequest) -> int:
        """The next turn: one past the latest turn this script played since the last user message (each reply is
        stamped with its turn, so a compaction that drops earlier replies does not restart the script)."""
        for message in reversed(request.messages):
            if isinstance(message, UserMessage):
                break
            if isinstance(message, AssistantMessage):
                return int(message.vendor.get("scriptTurn", 0)) + 1
        return 0

    def _script_key(self, request: ProviderRequest) -> str | None:
        """Which of the file's `prompts` plays: the one the conversation's replies say they played (stamped, so a
        compaction that replaces the first user message keeps it), else the first user message's text."""
        for message in reversed(request.messages):
            if isinstance(message, AssistantMessage) and "scriptFor" in message.vendor:
                played = message.vendor["scriptFor"]
                return played if isinstance(played, str) else None
        return next((m.text for m in request.messages if isinstance(m, UserMessage)), None)

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        turn = self._turn(request)
        key = self._script_key(request)
        vendor: dict[str, Any] = {"scriptTurn": turn, "scriptFor": key}
        text, thinking = "", ""
        calls: list[ToolCall] = []
        usage = Usage(input_tokens=sum(len(str(m)) for m in request.messages) // 4, output_tokens=0)
        script = self.prompts.get(key, self.script) if key is not None else self.script
        for step in script[min(turn, len(script) - 1)]:
            await asyncio.sleep(0)
            if "sleep" in step:
                await asyncio.sleep(float(step["sleep"]))
            if "thinking" in step:
                thinking += step["thinking"]
                yield ThinkingDelta(step["thinking"])
            if "text" in step:
                for piece in text_chunks(step["text"], step.get("chunks")):
                    text += piece
                    yield TextDelta(piece)
            if "tool" in step:
                call = ToolCall(
                    id=step.get("id") or f"call_{len(calls) + 1}_{len(request.messages)}",
                    name=step["tool"],
                    arguments=dict(step.get("args") or {}),
                )
                calls.append(call)
                yield ToolCallStart(len(calls) - 1, call.id, call.name)
            if "usage" in step:
                usage = Usage(
                    input_tokens=step["usage"].get("input", 0), output_tokens=step["usage"].get("output", 0)
                )
            if "error" in step:
                yield StreamDone(
                    AssistantMessage(
                        text=text,
                        thinking=thinking,
                        stop_reason="error",
                        error=step["error"],
                        error_code=step.get("code", "scripted_error"),
                        provider=self.name,
                        model=self.model,
                        vendor=vendor,
                    )
                )
                return
        if usage.output_tokens == 0:
            usage = Usage(
                input_tokens=usage.input_tokens, output_tokens=max(1, (len(text) + len(thinking)) // 4)
            )
        yield StreamDone(
            AssistantMessage(
                text=text,
                thinking=thinking,
                tool_calls=tuple(calls),
                stop_reason="tool_use" if calls else "end",
                usage=usage,
                provider=self.name,
                model=self.model,
                vendor=vendor,
            )
        )

    async def aclose(self) -> None:
        return None

    # The built-in scripts by name, as seed 001's `FakeProvider.streamed_run()` (a test keeps them in step).

    @classmethod
    def buffer_edit(cls) -> ScriptedProvider:
        """The `buffer-edit` script: reads notes.txt, edits it, runs `cat notes.txt` (for editor buffers)."""
        return cls("buffer-edit")

    @classmethod
    def calculate(cls) -> ScriptedProvider:
        """The `calculate` script: seed 000's quick start (`calculate 12 * 8 + 6`) through the calculator."""
        return cls("calculate")

    @classmethod
    def hello(cls) -> ScriptedProvider:
        """The `hello` script: answers in one streamed text, no tools."""
        return cls("hello")

    @classmethod
    def list_then_count(cls) -> ScriptedProvider:
        """The `list-then-count` script: a read-only command (`ls`), then one whose output comes line by line."""
        return cls("list-then-count")

    @classmethod
    def long_bash(cls) -> ScriptedProvider:
        """The `long-bash` script: runs a long shell command (for cancelling it)."""
        return cls("long-bash")

    @classmethod
    def parallel_reads(cls) -> ScriptedProvider:
        """The `parallel-reads` script: reads several files in one batch (they run in parallel)."""
        return cls("parallel-reads")

    @classmethod
    def nested_instructions(cls) -> ScriptedProvider:
        """The `nested-instructions` script: reads src/app.py, which brings src/AGENTS.md into the context."""
        return cls("nested-instructions")

    @classmethod
    def plan(cls) -> ScriptedProvider:
        """The `plan` script: keeps a plan with todo_write while reading sample.py."""
        return cls("plan")

    @classmethod
    def provider_error(cls) -> ScriptedProvider:
        """The `provider-error` script: streams part of an answer, then the provider fails."""
        return cls("provider-error")

    @classmethod
    def read_then_write(cls) -> ScriptedProvider:
        """The `read-then-write` script: reads notes.txt, then rewrites it."""
        return cls("read-then-write")

    @classmethod
    def rewind_edits(cls) -> ScriptedProvider:
        """The `rewind-edits` script: edits two files, creates a third, changes a fourth with `sed -i`."""
        return cls("rewind-edits")

    @classmethod
    def risk_based(cls) -> ScriptedProvider:
        """The `risk-based` script: a read, a command that only creates in the workspace, one that runs code."""
        return cls("risk-based")

    @classmethod
    def review_edits(cls) -> ScriptedProvider:
        """The `review-edits` script: four edits in two files, for hunk-by-hunk review."""
        return cls("review-edits")

    @classmethod
    def shell_edit(cls) -> ScriptedProvider:
        """The `shell-edit` script: changes a.txt with a shell command (`sed -i`)."""
        return cls("shell-edit")

    @classmethod
    def slow_answer(cls) -> ScriptedProvider:
        """The `slow-answer` script: answers slowly (for cancelling or steering mid-answer)."""
        return cls("slow-answer")

    @classmethod
    def streamed_run(cls) -> ScriptedProvider:
        """The `streamed-run` script: streams thinking and an answer, no tools: the simplest complete run."""
        return cls("streamed-run")

    @classmethod
    def task(cls) -> ScriptedProvider:
        """The `task` script: hands a sub-task to a sub-agent (`task`)."""
        return cls("task")

    @classmethod
    def tool_loop(cls) -> ScriptedProvider:
        """The `tool-loop` script: reads sample.py, edits it, verifies with bash, answers."""
        return cls("tool-loop")

    @classmethod
    def two_writes(cls) -> ScriptedProvider:
        """The `two-writes` script: two writes to the same file."""
        return cls("two-writes")
