"""The shape of each session line, checked on load: a line of the wrong shape is refused where it is, instead of
failing later, far away, as `AttributeError: 'str' object has no attribute 'get'`.

Pure functions over decoded JSON; hand-written rather than pydantic because they run once per line of every file
loaded (bench/sessions.py), and the fast path must stay fast. Unknown entry types (extensions) and unknown fields
pass: readers ignore what they do not know.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_ROLES = ("user", "assistant", "tool", "summary")


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _opt_str(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


_HEX = frozenset("0123456789abcdef")


def _images(v: Any) -> bool:
    """A user message's images: each {mimeType, sha256 (64 lowercase hex: it names the blob file), size}."""
    return isinstance(v, list) and all(
        isinstance(i, dict)
        and isinstance(i.get("mimeType"), str)
        and isinstance(i.get("sha256"), str)
        and len(i["sha256"]) == 64
        and _HEX.issuperset(i["sha256"])
        and type(i.get("size")) is int
        for i in v
    )


def _fields(obj: dict[str, Any], where: str, **checks: tuple[Callable[[Any], bool], str, bool]) -> str | None:
    """Each check: (predicate, what it should be, required)."""
    for key, (ok, what, required) in checks.items():
        if key not in obj:
            if required:
                return f"{where} has no {key!r}"
            continue
        if not ok(obj[key]):
            return f"{where}.{key} should be {what}, not {type(obj[key]).__name__}"
    return None


def _message(m: Any) -> str | None:
    if not isinstance(m, dict):
        return f"message should be an object, not {type(m).__name__}"
    role = m.get("role")
    if role not in _ROLES:
        return f"message.role {role!r} is not one of {', '.join(_ROLES)}"
    if role == "user":
        return _fields(
            m,
            "message",
            text=(_str, "a string", True),
            images=(_images, "a list of {mimeType, sha256, size}", False),
        )
    if role == "summary":
        return _fields(m, "message", text=(_str, "a string", True))
    if role == "tool":
        return _fields(
            m,
            "message",
            toolCallId=(_str, "a string", True),
            name=(_str, "a string", True),
            content=(_str, "a string", True),
            isError=(lambda v: isinstance(v, bool), "true or false", False),
            details=(lambda v: v is None or isinstance(v, dict), "an object", False),
        )
    problem = _fields(
        m,
        "message",
        text=(_str, "a string", False),
        thinking=(_str, "a string", False),
        stopReason=(_str, "a string", False),
        toolCalls=(lambda v: isinstance(v, list), "a list", False),
        usage=(
            lambda v: isinstance(v, dict) and all(isinstance(x, int) for x in v.values()),
            "token counts",
            False,
        ),
        error=(_opt_str, "a string", False),
        errorCode=(_opt_str, "a string", False),
        provider=(_str, "a string", False),
        model=(_str, "a string", False),
        vendor=(lambda v: v is None or isinstance(v, dict), "an object", False),
    )
    if problem:
        return problem
    for i, call in enumerate(m.get("toolCalls", ())):
        if not isinstance(call, dict):
            return f"message.toolCalls[{i}] should be an object"
        problem = _fields(
            call,
            f"message.toolCalls[{i}]",
            id=(_str, "a string", True),
            name=(_str, "a string", True),
            arguments=(lambda v: v is None or isinstance(v, dict), "an object", False),
            argumentsError=(_opt_str, "a string", False),
        )
        if problem:
            return problem
    return None


_ENTRY_CHECKS: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "message": lambda o: _message(o.get("message")) if "message" in o else "a message entry has no 'message'",
    "config": lambda o: _fields(
        o,
        "config",
        mode=(_str, "a string", False),
        provider=(_str, "a string", False),
        model=(_str, "a string", False),
    ),
    "permission": lambda o: _fields(
        o,
        "permission",
        rules=(
            lambda v: isinstance(v, list) and all(isinstance(r, dict) for r in v),
            "a list of objects",
            False,
        ),
    ),
    "rules": lambda o: _fields(
        o,
        "rules",
        rules=(
            lambda v: isinstance(v, list) and all(isinstance(r, dict) for r in v),
            "a list of objects",
            True,
        ),
    ),
    "compaction": lambda o: _fields(
        o,
        "compaction",
        summary=(_str, "a string", True),
        coveredEntryIds=(_str_list, "a list of strings", False),
        firstKeptEntryId=(_opt_str, "a string or null", False),
        readFiles=(_str_list, "a list of strings", False),
        modifiedFiles=(_str_list, "a list of strings", False),
    ),
    "label": lambda o: _fields(
        o, "label", targetId=(_str, "a string", True), label=(_opt_str, "a string or null", False)
    ),
}


def _fine(obj: Any) -> bool:
    """The common shapes, checked straight through (the descriptive checks below run only when this says no)."""
    if type(obj) is not dict:
        return False
    entry_id = obj.get("id")
    if entry_id is None:
        return False
    parent = obj.get("parentId")
    if not (type(entry_id) is str and entry_id and (parent is None or type(parent) is str)):
        return False
    if type(obj.get("timestamp")) is not str:
        return False
    kind = obj.get("type")
    if kind != "message":
        return False
    m = obj.get("message")
    if type(m) is not dict:
        return False
    role = m.get("role")
    if role == "user" or role == "summary":
        return type(m.get("text")) is str and ("images" not in m or _images(m["images"]))
    if role == "tool":
        details = m.get("details")
        return (
            type(m.get("toolCallId")) is str
            and type(m.get("name")) is str
            and type(m.get("content")) is str
            and type(m.get("isError", False)) is bool
            and (details is None or type(details) is dict)
        )
    if role != "assistant":
        return False
    for key in ("text", "thinking", "stopReason", "provider", "model"):
        value = m.get(key)
        if value is not None and type(value) is not str:
            return False
    usage = m.get("usage")
    if usage is not None and (type(usage) is not dict or any(type(v) is not int for v in usage.values())):
        return False
    calls = m.get("toolCalls")
    if calls is None:
        return True
    if type(calls) is not list:
        return False
    for call in calls:
        if type(call) is not dict or type(call.get("id")) is not str or type(call.get("name")) is not str:
            return False
        arguments = call.get("arguments")
        if arguments is not None and type(arguments) is not dict:
            return False
    return True


def line_problem(obj: Any) -> str | None:
    """Why a decoded session line (after the header) has the wrong shape, or None."""
    if _fine(obj):
        return None
    if not isinstance(obj, dict):
        return f"a line should be a JSON object, not {type(obj).__name__}"
    if "id" not in obj:
        if obj.get("type") != "leaf":
            return f"a line without an id is not a leaf record (type {obj.get('type')!r})"
        return _fields(
            obj,
            "leaf record",
            leafId=(_opt_str, "a string or null", True),
            timestamp=(_str, "a string", False),
        )
    problem = _fields(
        obj,
        "entry",
        id=(lambda v: isinstance(v, str) and bool(v), "a non-empty string", True),
        parentId=(_opt_str, "a string or null", False),
        type=(_str, "a string", True),
        timestamp=(_str, "a string", True),
    )
    if problem:
        return problem
    check = _ENTRY_CHECKS.get(obj["type"])
    return check(obj) if check is not None else None
