"""An MCP `tools/call` result as a tool result: text as is, images and binary resources as labelled placeholders
(their bytes stay out of the model's text), embedded text resources with their URI, structured content as JSON."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import mcp_types as types

from kgent.tools.base import ToolOutput


def _size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)


def _block(block: Any, media: list[dict[str, Any]]) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        size = _size(block.data)
        media.append({"type": kind, "mimeType": block.mime_type, "bytes": size})
        return f"[{kind}: {block.mime_type}, {size} bytes]"
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        if isinstance(res, types.TextResourceContents):
            return f"[resource {res.uri}]\n{res.text}"
        size = _size(res.blob) if isinstance(res, types.BlobResourceContents) else 0
        media.append({"type": "resource", "uri": str(res.uri), "mimeType": res.mime_type, "bytes": size})
        return f"[resource {res.uri}: {res.mime_type or 'binary'}, {size} bytes]"
    if isinstance(block, types.ResourceLink):
        return f"[resource link {block.uri}: {block.name}]"
    return f"[unsupported content block: {getattr(block, 'type', type(block).__name__)}]"


def to_output(result: types.CallToolResult) -> ToolOutput:
    """The tool output of `result` (not yet truncated)."""
    media: list[dict[str, Any]] = []
    parts = [_block(b, media) for b in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, indent=1, ensure_ascii=False))
    details: dict[str, Any] = {"media": media} if media else {}
    return ToolOutput(
        content="\n".join(parts) or "(no output)", is_error=bool(result.is_error), details=details
    )
