"""OpenAI-compatible Chat Completions (DeepSeek by default; OpenAI, Ollama, vLLM, llama.cpp via the base URL).

`POST {base_url}/chat/completions`, streamed. One converter per direction: kernel messages → wire JSON
(encoded incrementally, see history.py), wire chunks → stream events and the finished `AssistantMessage`.
These APIs cache prompt prefixes by themselves: what keeps them hitting is a request that starts with the same bytes
as the last one (a fixed field order, the history encoded once, a system prompt fixed for the session).
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from urllib.parse import urlsplit

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

_FINISH = {"stop": "end", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens"}
# Hosts whose API takes `prompt_cache_key` (requests with one key and one prefix go to the same cache). Other
# OpenAI-compatible servers need not know the field, and a strict one refuses a request with an unknown field: they
# get none.
PROMPT_CACHE_KEY_HOSTS = frozenset({"api.openai.com"})


# -- kernel → wire -------------------------------------------------------------------------------------------
def message_to_wire(message: Message) -> dict[str, Any]:
    """One kernel message as a Chat Completions message."""
    match message:
        case UserMessage(text=text, images=()) | InstructionsMessage(text=text):
            return {"role": "user", "content": text}
        case UserMessage(text=text, images=images):
            parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            parts.extend(image_part(i) for i in images)
            return {"role": "user", "content": parts}
        case SummaryMessage(text=text):
            return {"role": "user", "content": summary_text(text)}
        case ToolResultMessage():
            return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
        case AssistantMessage():
            # content may be null only beside tool calls
            wire: dict[str, Any] = {
                "role": "assistant",
                "content": message.text or (None if message.tool_calls else ""),
            }
            reasoning = message.vendor.get("reasoning_content")
            if reasoning:  # DeepSeek's thinking models need it back in the history of a tool loop
                wire["reasoning_content"] = reasoning
            if message.tool_calls:
                wire["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": json.dumps(call.arguments, ensure_ascii=False),
                        },
                    }
                    for call in message.tool_calls
                ]
            return wire
    raise TypeError(f"not a message: {message!r}")


def image_part(image: ImagePart) -> dict[str, Any]:
    """An image as a Chat Completions content part (a data: URL)."""
    url = f"data:{image.mime_type};base64,{base64.b64encode(image.data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


def tool_to_wire(tool: ToolSchema) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def _convert(message: Message) -> Converted:
    return "", [dumps(message_to_wire(message))]


# -- wire → kernel -------------------------------------------------------------------------------------------
def usage_from_wire(u: dict[str, Any]) -> Usage:
    prompt = int(u.get("prompt_tokens") or 0)
    details = u.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or u.get("prompt_cache_hit_tokens") or 0)
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(u.get("completion_tokens") or 0),
        cache_read_tokens=cached,
    )


class _Call:
    __slots__ = ("id", "name", "args", "started")

    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.args: list[str] = []
        self.started = False


class ChatDecoder:
    """Assembles one streamed Chat Completion: content, reasoning, tool calls (arguments by index), usage."""

    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.calls: dict[int, _Call] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.done = False

    def feed(self, event: str, data: bytes) -> list[StreamEvent] | None:
        if self.done:
            return None
        if data == b"[DONE]" or data.strip() == b"[DONE]":
            self.done = True
            return None
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise ProviderError(
                f"The model server sent invalid JSON in the stream ({exc}): {data[:200]!r}",
                code="stream_error",
            ) from None
        if not isinstance(chunk, dict):
            raise ProviderError(
                f"The model server sent an unexpected stream event: {data[:200]!r}", code="stream_error"
            )
        if event == "error" or "error" in chunk:
            raise _stream_error(chunk)
        usage = chunk.get("usage")
        if usage:
            self.usage = usage_from_wire(usage)
        choices = chunk.get("choices")
        if not choices:
            return None
        choice = choices[0]
        out: list[StreamEvent] | None = None
        delta = choice.get("delta")
        if delta:
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                self.thinking.append(reasoning)
                out = [ThinkingDelta(reasoning)]
            content = delta.get("content")
            if content:
                self.text.append(content)
                if out is None:
                    out = [TextDelta(content)]
                else:
                    out.append(TextDelta(content))
            tool_calls = delta.get("tool_calls")
            if tool_calls:
                started = self._tool_deltas(tool_calls)
                if started:
                    out = (out or []) + started
        finish = choice.get("finish_reason")
        if finish:
            self.finish_reason = finish
        return out

    def _tool_deltas(self, deltas: list[dict[str, Any]]) -> list[StreamEvent]:
        started: list[StreamEvent] = []
        for d in deltas:
            index = d.get("index")
            if (
                index is None
            ):  # some servers omit it: a new id starts a call, otherwise it continues the last one
                call_id = d.get("id")
                known = [i for i, c in self.calls.items() if call_id and c.id == call_id]
                if known:
                    index = known[0]
                elif call_id or not self.calls:
                    index = len(self.calls)
                else:
                    index = max(self.calls)
            call = self.calls.get(index)
            if call is None:
                call = self.calls[index] = _Call()
            if d.get("id") and not call.id:
                call.id = d["id"]
            function = d.get("function") or {}
            if function.get("name") and not call.name:
                call.name = function["name"]
            if function.get("arguments"):
                call.args.append(function["arguments"])
            if call.name and not call.started:
                call.started = True
                call.id = call.id or f"call_{index}"
                started.append(ToolCallStart(index, call.id, call.name))
        return started

    def _message(self, **fields: Any) -> AssistantMessage:
        thinking = "".join(self.thinking)
        return AssistantMessage(
            text="".join(self.text),
            thinking=thinking,
            usage=self.usage,
            provider=self.provider,
            model=self.model,
            vendor={"reasoning_content": thinking} if thinking else {},
            **fields,
        )

    def finish(self) -> AssistantMessage:
        if not self.done:
            raise ProviderError(
                "The model stream ended before [DONE]: the response is incomplete", code="stream_error"
            )
        if self.finish_reason == "content_filter":
            raise ProviderError("The provider's content filter stopped the response", code="content_filter")
        calls = []
        for index in sorted(self.calls):
            call = self.calls[index]
            arguments, problem = parse_arguments("".join(call.args))
            calls.append(
                ToolCall(
                    id=call.id or f"call_{index}",
                    name=call.name,
                    arguments=arguments,
                    arguments_error=problem,
                )
            )
        stop = _FINISH.get(self.finish_reason or "", "end")
        if calls and stop == "end":  # the calls decide, whatever the label said
            stop = "tool_use"
        elif not calls and stop == "tool_use":
            stop = "end"
        return self._message(tool_calls=tuple(calls), stop_reason=stop)

    def partial(self, error: ProviderError) -> AssistantMessage:
        return self._message(stop_reason="error", error=error.message, error_code=error.code)


def _stream_error(chunk: dict[str, Any]) -> ProviderError:
    err = chunk.get("error")
    message = err.get("message") if isinstance(err, dict) else err
    kind = (err.get("type") or err.get("code") or "") if isinstance(err, dict) else ""
    text = str(message or chunk)
    if OVERFLOW_PATTERN.search(f"{kind} {text}"):
        return ProviderError(
            f"The conversation is too long for the model's context window: {text}", code=CONTEXT_OVERFLOW
        )
    retryable = bool(
        re.search(r"overload|rate|unavailable|server|timeout|busy", f"{kind} {text}", re.IGNORECASE)
    )
    return ProviderError(
        f"The model server reported an error mid-stream: {text}", code="provider_error", retryable=retryable
    )


class OpenAIProvider(HTTPProvider):
    """Chat Completions over SSE. Keys: KGENT_API_KEY, then DEEPSEEK_API_KEY / OPENAI_API_KEY as fits the URL."""

    name = "openai"
    default_base_url = "https://api.deepseek.com"
    default_model = "deepseek-chat"

    def _url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _request_headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.config.api_key:
            headers["authorization"] = f"Bearer {self.config.api_key}"
        return headers

    def _setup(self) -> None:
        self._history = HistoryEncoder(_convert)
        self._tools_key: tuple[ToolSchema, ...] | None = None
        self._tools_json = b""
        self._sends_cache_key = urlsplit(self.base_url).hostname in PROMPT_CACHE_KEY_HOSTS

    def _body(self, request: ProviderRequest) -> bytes:
        head: dict[str, Any] = {
            "model": request.model or self.model,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        max_tokens = request.max_tokens or self.config.max_tokens
        if max_tokens:
            head["max_tokens"] = max_tokens
        if request.cache_key and self._sends_cache_key:
            head["prompt_cache_key"] = request.cache_key
        if request.tools is not self._tools_key:
            self._tools_key = request.tools
            self._tools_json = dumps([tool_to_wire(t) for t in request.tools]) if request.tools else b""
        system = dumps({"role": "system", "content": request.system_prompt}) if request.system_prompt else b""
        history = self._history.encode(request.messages)
        messages = b",".join(part for part in (system, history) if part)
        tools = b',"tools":' + self._tools_json if self._tools_json else b""
        return dumps(head)[:-1] + tools + b',"messages":[' + messages + b"]}"

    def _decoder(self) -> ChatDecoder:
        return ChatDecoder(self.name, self.model)
