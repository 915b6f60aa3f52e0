"""Check a tool call's arguments against the tool's JSON Schema (the subset tools use) before anything runs."""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def validate_arguments(schema: dict[str, Any], args: dict[str, Any]) -> str | None:
    """None when `args` fit `schema`; otherwise one sentence saying what is wrong."""
    props: dict[str, Any] = schema.get("properties", {})
    missing = [k for k in schema.get("required", ()) if k not in args]
    if missing:
        return f"missing required argument(s): {', '.join(missing)}"
    if schema.get("additionalProperties") is False:
        extra = sorted(k for k in args if k not in props)
        if extra:
            return f"unexpected argument(s): {', '.join(extra)}"
    for key, value in args.items():
        expected = props.get(key, {}).get("type")
        if expected is None:
            continue
        names = expected if isinstance(expected, list) else [expected]
        ok = any(
            isinstance(value, _TYPES.get(n, (object,)))
            and not (n in ("integer", "number") and isinstance(value, bool))
            for n in names
        )
        if not ok and value is None and "null" in names:
            ok = True
        if not ok:
            return f"argument {key!r} must be of type {'/'.join(names)}, got {type(value).__name__}"
    return None
