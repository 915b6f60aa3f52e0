"""Validation of the daemon's request params (the edge: wrong input becomes ParamsError → -32602) and the
translation of prompt content blocks into the kernel's prompt text. Stdlib only.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from kgent.daemon.handshake import MODES, ParamsError, normalize_mode


def obj(params: Any) -> dict[str, Any]:
    """The params object; omitted params count as `{}`; positional params are refused."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise ParamsError("invalid params: params must be an object (named parameters)")
    return params


def string(p: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = p.get(key)
    if value is None:
        if required:
            raise ParamsError(f"invalid params: '{key}' is required")
        return None
    if not isinstance(value, str) or not value:
        raise ParamsError(f"invalid params: '{key}' must be a non-empty string")
    return value


def boolean(p: dict[str, Any], key: str) -> bool:
    value = p.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ParamsError(f"invalid params: '{key}' must be a boolean")
    return value


def positive_number(p: dict[str, Any], key: str) -> float | None:
    value = p.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ParamsError(f"invalid params: '{key}' must be a positive number")
    return float(value)


def absolute_path(p: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = string(p, key, required=required)
    if value is not None and ("\x00" in value or not os.path.isabs(value)):
        raise ParamsError(f"invalid params: '{key}' must be an absolute path")
    return value


def _block_text(block: Any, i: int) -> str:
    if not isinstance(block, dict):
        raise ParamsError(f"invalid params: prompt[{i}] must be a content block object")
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        if not isinstance(text, str):
            raise ParamsError(f"invalid params: prompt[{i}].text must be a string")
        return text
    if kind == "resource_link":
        uri, name = block.get("uri"), block.get("name")
        if not isinstance(uri, str) or not isinstance(name, str):
            raise ParamsError(f"invalid params: prompt[{i}] (resource_link) needs string 'uri' and 'name'")
        return f"[{name}]({uri})"
    if kind == "resource":
        res = block.get("resource")
        if not isinstance(res, dict) or not isinstance(res.get("uri"), str):
            raise ParamsError(f"invalid params: prompt[{i}] (resource) needs a 'resource' object with a string 'uri'")
        if not isinstance(res.get("text"), str):
            raise ParamsError(f"invalid params: prompt[{i}]: only text resources are supported (no 'blob')")
        return f'<resource uri="{res["uri"]}">\n{res["text"]}\n</resource>'
    shown = kind if isinstance(kind, str) else type(kind).__name__
    raise ParamsError(
        f"invalid params: prompt[{i}]: content type {shown[:40]!r} is not supported (supported: text, resource_link, resource)"
    )


def prompt_text(value: Any) -> str:
    """A prompt (a string, or an array of ACP content blocks) as the one text the kernel takes."""
    if isinstance(value, str):
        if not value.strip():
            raise ParamsError("invalid params: 'prompt' must not be empty")
        return value
    if isinstance(value, list) and value:
        text = "\n\n".join(_block_text(b, i) for i, b in enumerate(value))
        if not text.strip():
            raise ParamsError("invalid params: 'prompt' must not be empty")
        return text
    if value is None:
        raise ParamsError("invalid params: 'prompt' is required")
    raise ParamsError("invalid params: 'prompt' must be a string or a non-empty array of content blocks")


def mode(p: dict[str, Any]) -> str | None:
    raw = string(p, "mode", required=False)
    if raw is None:
        return None
    normalized = normalize_mode(raw)
    if normalized is None:
        raise ParamsError(f"invalid params: 'mode' must be one of {', '.join(MODES)} (got {raw[:40]!r})", "unknown_permission_mode")
    return normalized


@dataclass(frozen=True, slots=True)
class RunParams:
    prompt: str
    workspace: str | None
    session_id: str | None
    parent_entry_id: str | None
    mode: str | None
    provider: str | None
    model: str | None
    cost_limit: float | None = None


def run_params(params: Any) -> RunParams:
    p = obj(params)
    session_id = string(p, "sessionId", required=False)
    parent = string(p, "parentEntryId", required=False)
    if parent is not None and session_id is None:
        raise ParamsError("invalid params: 'parentEntryId' needs a 'sessionId'")
    return RunParams(
        prompt=prompt_text(p.get("prompt")),
        workspace=absolute_path(p, "workspace", required=session_id is None),
        session_id=session_id,
        parent_entry_id=parent,
        mode=mode(p),
        provider=string(p, "provider", required=False),
        model=string(p, "model", required=False),
        cost_limit=positive_number(p, "costLimit"),
    )


def run_id(params: Any) -> str:
    return string(obj(params), "runId")  # type: ignore[return-value]


def run_text(params: Any) -> tuple[str, str]:
    p = obj(params)
    rid = string(p, "runId")
    text = p.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ParamsError("invalid params: 'text' must be a non-empty string")
    return rid, text  # type: ignore[return-value]


def workspace(params: Any) -> str:
    return absolute_path(obj(params), "workspace")  # type: ignore[return-value]


def session(params: Any) -> tuple[str, bool]:
    p = obj(params)
    return string(p, "sessionId"), boolean(p, "branchOnly")  # type: ignore[return-value]


def fork(params: Any) -> tuple[str, str]:
    p = obj(params)
    return string(p, "sessionId"), string(p, "entryId")  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class CompactParams:
    session_id: str
    instructions: str | None
    provider: str | None
    model: str | None


def compact(params: Any) -> CompactParams:
    p = obj(params)
    instructions = p.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise ParamsError("invalid params: 'instructions' must be a string")
    return CompactParams(
        session_id=string(p, "sessionId"),  # type: ignore[arg-type]
        instructions=instructions or None,
        provider=string(p, "provider", required=False),
        model=string(p, "model", required=False),
    )
