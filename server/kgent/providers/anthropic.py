"""Anthropic Messages API: `POST {base_url}/v1/messages`, streamed, `x-api-key` + `anthropic-version`.

Tool results go back as `tool_result` blocks, consecutive ones grouped into one user message; thinking blocks
come back with their signatures (kept in `AssistantMessage.vendor["thinking_blocks"]`), as the API requires.
Every request marks prompt-cache breakpoints (see `cache_breakpoints`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from kgent.core.errors import ProviderError
from kgent.core.messages import (
    AssistantMessage,
    ImagePart,
    InstructionsMessage,
    Message,
    SummaryMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from kgent.providers.base import (
    CONTEXT_OVERFLOW,
    ProviderRequest,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallStart,
    ToolSchema,
)
from kgent.providers.history import Converted, HistoryEncoder
from kgent.providers.http import OVERFLOW_PATTERN
from kgent.providers.streaming import HTTPProvider
from kgent.providers.wire import dumps, parse_arguments, summary_text

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
_STOP = {
    "end_turn": "end",
    "stop_sequence": "end",
    "pause_turn": "end",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
}
_RETRYABLE = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}

# Prompt caching. The API caches the request up to a block marked `cache_control` and bills a later request's
# longest cached prefix at the cache-read rate. At most four marks per request (the API's limit), placed so that
# each turn reuses the previous one: the last tool definition and the system prompt (the same for a whole session),
# the newest user message (the conversation so far: written now, read next turn) and the user message that was the
# newest one in the previous request (read now, even when this turn added more blocks than the API looks back over
# for an earlier breakpoint, about 20). A compaction replaces the start of the history: the next request writes a
# new prefix the same way.
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
_MARK = b',"cache_control":{"type":"ephemeral"}'
_USER = b'{"role":"user",'


# -- kernel → wire -------------------------------------------------------------------------------------------
def message_blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    """A kernel message as (role, content blocks); the caller merges consecutive messages of one role."""
    match message:
        case UserMessage(text=text, images=images):
            parts = [image_block(i) for i in images]  # images first: the vendor's advice
            if text or not images:
                parts.append({"type": "text", "text": text or "(empty)"})
            return "user", parts
        case InstructionsMessage(text=text):
            return "user", [{"type": "text", "text": text or "(empty)"}]
        case SummaryMessage(text=text):
            return "user", [{"type": "text", "text": summary_text(text)}]
        case ToolResultMessage():
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
            }
            if message.is_error:
                block["is_error"] = True
            return "user", [block]
        case AssistantMessage():
            blocks: list[dict[str, Any]] = list(message.vendor.get("thinking_blocks") or ())
            if message.text:
                blocks.append({"type": "text", "text": message.text})
            blocks.extend(
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                for c in message.tool_calls
            )
            return "assistant", blocks
    raise TypeError(f"not a message: {message!r}")


def image_block(image: ImagePart) -> dict[str, Any]:
    """An image as a Messages API content block (base64 source)."""
    data = base64.b64encode(image.data).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": data}}


def tool_to_wire(tool: ToolSchema) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def _convert(message: Message) -> Converted:
    role, blocks = message_blocks(message)
    return role, [dumps(b) for b in blocks]


def _wrap(role: str, parts: list[bytes]) -> bytes:
    if not parts:  # the API rejects empty content
        parts = [b'{"type":"text","text":"(empty)"}']
    return b'{"role":"' + role.encode() + b'","content":[' + b",".join(parts) + b"]}"


def cache_breakpoints(parts: Sequence[bytes]) -> list[int]:
    """Which wire messages get a breakpoint on their last block: the newest user message and the user message before
    the newest assistant message (the previous request's newest), oldest first; fewer when there are none."""
    newest: int | None = None
    for i in range(len(parts) - 1, -1, -1):
        if not parts[i].startswith(_USER):
            continue
        if newest is None:
            newest = i
        elif i < newest - 1:  # an assistant message lies between them
            return [i, newest]
    return [] if newest is None else [newest]


def _marked(part: bytes) -> bytes:
    """A wire message with a breakpoint on its last block (`{"role":…,"content":[…,{…}]}`; never a thinking block:
    only user messages are marked)."""
    assert part.endswith(b"}]}"), part[-40:]
    return part[:-3] + _MARK + b"}]}"


# -- wire → kernel -------------------------------------------------------------------------------------------
class _Block:
    __slots__ = ("kind", "parts", "signature", "data", "id", "name", "tool_index")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.parts: list[str] = []
        self.signature = ""
        self.data = ""
        self.id = ""
        self.name = ""
        self.tool_index = -1


class MessagesDecoder:
    """Assembles one streamed Messages response: text, thinking (+ signatures), tool_use input JSON, usage."""

    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self.blocks: dict[int, _Block] = {}
        self.tools = 0
        self.stop_reason: str | None = None
        self.usage = Usage()
        self.done = False

    def feed(self, event: str, data: bytes) -> list[StreamEvent] | None:
        if self.done:
            return None
        try:
            obj = json.loads(data)
        except ValueError as exc:
            raise ProviderError(
                f"The model server sent invalid JSON in the stream ({exc}): {data[:200]!r}",
                code="stream_error",
            ) from None
        if not isinstance(obj, dict):
            raise ProviderError(
                f"The model server sent an unexpected stream event: {data[:200]!r}", code="stream_error"
            )
        kind = obj.get("type") or event
        if kind == "content_block_delta":
            block = self.blocks.get(obj.get("index", -1))
            if block is None:
                raise ProviderError(
                    f"The model server sent a delta for an unknown block: {data[:200]!r}", code="stream_error"
                )
            delta = obj.get("delta") or {}
            dtype = delta.get("type")
            if dtype == "text_delta":
                text = delta.get("text") or ""
                block.parts.append(text)
                return [TextDelta(text)] if text else None
            if dtype == "thinking_delta":
                text = delta.get("thinking") or ""
                block.parts.append(text)
                return [ThinkingDelta(text)] if text else None
            if dtype == "input_json_delta":
                block.parts.append(delta.get("partial_json") or "")
            elif dtype == "signature_delta":
                block.signature += delta.get("signature") or ""
            return None
        if kind == "content_block_start":
            return self._start(obj.get("index", len(self.blocks)), obj.get("content_block") or {})
        if kind == "message_start":
            self._usage((obj.get("message") or {}).get("usage") or {})
        elif kind == "message_delta":
            self.stop_reason = (obj.get("delta") or {}).get("stop_reason") or self.stop_reason
            self._usage(obj.get("usage") or {})
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            raise _stream_error(obj)
        return None  # ping, content_block_stop and unknown future events

    def _start(self, index: int, content: dict[str, Any]) -> list[StreamEvent] | None:
        ctype = content.get("type", "")
        block = self.blocks[index] = _Block(ctype)
        if ctype == "text" and content.get("text"):
            block.parts.append(content["text"])
            return [TextDelta(content["text"])]
        if ctype == "thinking" and content.get("thinking"):
            block.parts.append(content["thinking"])
            block.signature = content.get("signature") or ""
            return [ThinkingDelta(content["thinking"])]
        if ctype == "redacted_thinking":
            block.data = content.get("data") or ""
        elif ctype == "tool_use":
            block.id, block.name = content.get("id") or f"toolu_{index}", content.get("name") or ""
            block.tool_index, self.tools = self.tools, self.tools + 1
            if content.get("input"):  # some servers send the whole input at the start
                block.parts.append(json.dumps(content["input"]))
            return [ToolCallStart(block.tool_index, block.id, block.name)]
        return None

    def _usage(self, u: dict[str, Any]) -> None:
        usage = self.usage
        self.usage = Usage(
            input_tokens=int(u.get("input_tokens") or usage.input_tokens),
            output_tokens=int(u.get("output_tokens") or usage.output_tokens),
            cache_read_tokens=int(u.get("cache_read_input_tokens") or usage.cache_read_tokens),
            cache_write_tokens=int(u.get("cache_creation_input_tokens") or usage.cache_write_tokens),
        )

    def _message(self, **fields: Any) -> AssistantMessage:
        text, thinking, echo = [], [], []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.kind == "text":
                text.extend(block.parts)
            elif block.kind == "thinking":
                thinking.extend(block.parts)
                echo.append(
                    {"type": "thinking", "thinking": "".join(block.parts), "signature": block.signature}
                )
            elif block.kind == "redacted_thinking":
                echo.append({"type": "redacted_thinking", "data": block.data})
        return AssistantMessage(
            text="".join(text),
            thinking="".join(thinking),
            usage=self.usage,
            provider=self.provider,
            model=self.model,
            vendor={"thinking_blocks": echo} if echo else {},
            **fields,
        )

    def finish(self) -> AssistantMessage:
        if not self.done:
            raise ProviderError(
                "The model stream ended before message_stop: the response is incomplete", code="stream_error"
            )
        if self.stop_reason == "refusal":
            raise ProviderError("The model refused to continue (stop_reason refusal)", code="content_filter")
        calls = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.kind == "tool_use":
                arguments, problem = parse_arguments("".join(block.parts))
                calls.append(
                    ToolCall(id=block.id, name=block.name, arguments=arguments, arguments_error=problem)
                )
        stop = _STOP.get(self.stop_reason or "", "end")
        if calls and stop == "end":  # the calls decide, whatever the label said
            stop = "tool_use"
        elif not calls and stop == "tool_use":
            stop = "end"
        return self._message(tool_calls=tuple(calls), stop_reason=stop)

    def partial(self, error: ProviderError) -> AssistantMessage:
        return self._message(stop_reason="error", error=error.message, error_code=error.code)


def _stream_error(obj: dict[str, Any]) -> ProviderError:
    err = obj.get("error") or {}
    kind = str(err.get("type") or "error") if isinstance(err, dict) else "error"
    text = str(err.get("message") or obj) if isinstance(err, dict) else str(err)
    if OVERFLOW_PATTERN.search(text):
        return ProviderError(
            f"The conversation is too long for the model's context window: {text}", code=CONTEXT_OVERFLOW
        )
    code = "overloaded" if kind == "overloaded_error" else "provider_error"
    return ProviderError(
        f"The model server reported {kind} mid-stream: {text}", code=code, retryable=kind in _RETRYABLE
    )


class AnthropicProvider(HTTPProvider):
    """Messages API over SSE. Key: KGENT_API_KEY or ANTHROPIC_API_KEY."""

    name = "anthropic"
    default_base_url = "https://api.anthropic.com"
    default_model = "claude-sonnet-4-5"

    def _url(self) -> str:
        # Accept a base URL given with or without the version segment.
        return (
            f"{self.base_url}/messages" if self.base_url.endswith("/v1") else f"{self.base_url}/v1/messages"
        )

    def _request_headers(self) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": API_VERSION,
        }
        if self.config.api_key:
            headers["x-api-key"] = self.config.api_key
        return headers

    def _setup(self) -> None:
        self._history = HistoryEncoder(_convert, merge=frozenset({"user", "assistant"}), wrap=_wrap)
        self._tools_key: tuple[ToolSchema, ...] | None = None
        self._tools_json = b""

    def _body(self, request: ProviderRequest) -> bytes:
        head: dict[str, Any] = {
            "model": request.model or self.model,
            "max_tokens": request.max_tokens or self.config.max_tokens or DEFAULT_MAX_TOKENS,
            "stream": True,
        }
        if request.system_prompt:
            head["system"] = [{"type": "text", "text": request.system_prompt, "cache_control": EPHEMERAL}]
        if request.tools is not self._tools_key:
            self._tools_key = request.tools
            wire = [tool_to_wire(t) for t in request.tools]
            if wire:
                wire[-1]["cache_control"] = EPHEMERAL
            self._tools_json = dumps(wire) if wire else b""
        tools = b',"tools":' + self._tools_json if self._tools_json else b""
        parts = self._history.encode_parts(request.messages)
        for i in cache_breakpoints(parts):
            parts[i] = _marked(parts[i])
        return dumps(head)[:-1] + tools + b',"messages":[' + b",".join(parts) + b"]}"

    def _decoder(self) -> MessagesDecoder:
        return MessagesDecoder(self.name, self.model)
