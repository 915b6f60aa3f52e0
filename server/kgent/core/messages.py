"""Conversation messages: the values the loop, the providers and the session store share.

Frozen dataclasses; `message_to_dict` / `message_from_dict` are the one JSON form (sessions, the wire).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

StopReason = Literal["end", "tool_use", "max_tokens", "error", "aborted"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token counts a provider reported for one model call (or a sum of them)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cacheReadTokens": self.cache_read_tokens,
            "cacheWriteTokens": self.cache_write_tokens,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Usage:
        d = d or {}
        return cls(
            input_tokens=int(d.get("inputTokens", 0)),
            output_tokens=int(d.get("outputTokens", 0)),
            cache_read_tokens=int(d.get("cacheReadTokens", 0)),
            cache_write_tokens=int(d.get("cacheWriteTokens", 0)),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One call the model asked for. `arguments_error` is set when its JSON did not parse to an object."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    arguments_error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ImagePart:
    """An image the user attached. Sessions keep only its type, hash and size (the bytes are a blob beside the
    session file, stored once by sha256); `data` is empty until the store's blob is read back (`with_data`)."""

    mime_type: str
    sha256: str
    size: int
    name: str = ""  # what the client called it (a file name), for people; never sent to a model
    data: bytes = field(default=b"", repr=False, compare=False)

    def with_data(self, data: bytes) -> ImagePart:
        return ImagePart(
            mime_type=self.mime_type, sha256=self.sha256, size=self.size, name=self.name, data=data
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"mimeType": self.mime_type, "sha256": self.sha256, "size": self.size}
        if self.name:
            d["name"] = self.name
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ImagePart:
        return cls(
            mime_type=str(d["mimeType"]),
            sha256=str(d["sha256"]),
            size=int(d["size"]),
            name=str(d.get("name", "")),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage:
    text: str
    images: tuple[ImagePart, ...] = ()  # after the text, in the order the user gave them
    role: Literal["user"] = "user"


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage:
    """A finished model turn. `vendor` keeps what a provider must echo back (signatures, reasoning)."""

    text: str = ""
    thinking: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: StopReason = "end"
    usage: Usage | None = None
    error: str | None = None
    error_code: str | None = None
    provider: str = ""
    model: str = ""
    vendor: dict[str, Any] = field(default_factory=dict)
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultMessage:
    """The result of one tool call, fed back to the model in call order."""

    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    details: dict[str, Any] = field(default_factory=dict)
    role: Literal["tool"] = "tool"


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryMessage:
    """A compaction checkpoint's summary, standing in for the history it covers."""

    text: str
    role: Literal["summary"] = "summary"


@dataclass(frozen=True, slots=True, kw_only=True)
class InstructionsMessage:
    """Project instructions (AGENTS.md …) the context carries, sent as user text; never a prompt of the user's."""

    text: str
    role: Literal["instructions"] = "instructions"


Message = UserMessage | AssistantMessage | ToolResultMessage | SummaryMessage | InstructionsMessage


def message_to_dict(message: Message) -> dict[str, Any]:
    """The JSON form of a message (camelCase keys, defaults omitted)."""
    match message:
        case UserMessage(text=text, images=images):
            if images:  # a text-only message keeps its old form
                return {"role": "user", "text": text, "images": [i.to_dict() for i in images]}
            return {"role": "user", "text": text}
        case SummaryMessage(text=text):
            return {"role": "summary", "text": text}
        case InstructionsMessage(text=text):
            return {"role": "instructions", "text": text}
        case ToolResultMessage():
            d: dict[str, Any] = {
                "role": "tool",
                "toolCallId": message.tool_call_id,
                "name": message.name,
                "content": message.content,
                "isError": message.is_error,
            }
            if message.details:
                d["details"] = message.details
            return d
        case AssistantMessage():
            d = {"role": "assistant", "text": message.text, "stopReason": message.stop_reason}
            if message.thinking:
                d["thinking"] = message.thinking
            if message.tool_calls:
                d["toolCalls"] = [_call_to_dict(c) for c in message.tool_calls]
            if message.usage is not None:
                d["usage"] = message.usage.to_dict()
            for key, value in (
                ("error", message.error),
                ("errorCode", message.error_code),
                ("provider", message.provider),
                ("model", message.model),
            ):
                if value:
                    d[key] = value
            if message.vendor:
                d["vendor"] = message.vendor
            return d
    raise TypeError(f"not a message: {message!r}")


def _call_to_dict(call: ToolCall) -> dict[str, Any]:
    d: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.arguments_error:
        d["argumentsError"] = call.arguments_error
    return d


def message_from_dict(d: dict[str, Any]) -> Message:
    """Inverse of `message_to_dict`; raises ValueError on an unknown role."""
    role = d.get("role")
    if role == "user":
        images = tuple(ImagePart.from_dict(i) for i in d.get("images") or ())
        return UserMessage(text=str(d["text"]), images=images)
    if role == "summary":
        return SummaryMessage(text=str(d["text"]))
    if role == "instructions":
        return InstructionsMessage(text=str(d["text"]))
    if role == "tool":
        return ToolResultMessage(
            tool_call_id=d["toolCallId"],
            name=d["name"],
            content=d["content"],
            is_error=bool(d.get("isError", False)),
            details=dict(d.get("details") or {}),
        )
    if role == "assistant":
        return AssistantMessage(
            text=d.get("text", ""),
            thinking=d.get("thinking", ""),
            tool_calls=tuple(
                ToolCall(
                    id=c["id"],
                    name=c["name"],
                    arguments=dict(c.get("arguments") or {}),
                    arguments_error=c.get("argumentsError"),
                )
                for c in d.get("toolCalls", ())
            ),
            stop_reason=d.get("stopReason", "end"),
            usage=Usage.from_dict(d["usage"]) if "usage" in d else None,
            error=d.get("error"),
            error_code=d.get("errorCode"),
            provider=d.get("provider", ""),
            model=d.get("model", ""),
            vendor=dict(d.get("vendor") or {}),
        )
    raise ValueError(f"unknown message role: {role!r}")
