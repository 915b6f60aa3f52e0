"""The one argument validator: each tool's JSON Schema, compiled once, checks a call's arguments before anything runs —
built-in, extension and MCP tools alike; the tools then read arguments that fit their schema.

`jsonschema` is imported on the first check (not when the kernel is assembled): a run that calls no tool never loads
it. What a model commonly gets wrong and means clearly (`"5"` for an integer, `"true"` for a boolean, `3.0` for 3) is
read as meant before the check, as the tools' own readers did.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any

_SCALARS = ("integer", "number", "boolean")


def _jsonschema() -> Any:
    return importlib.import_module(
        "jsonschema"
    )  # on the first check: ~0.1 s that a run without tools never pays


def _coercible(schema: Mapping[str, Any]) -> dict[str, str]:
    """{property: its scalar type} for the top-level properties a model's string or float may stand in for."""
    props = schema.get("properties")
    out: dict[str, str] = {}
    if isinstance(props, Mapping):
        for name, sub in props.items():
            kind = sub.get("type") if isinstance(sub, Mapping) else None
            if kind in _SCALARS:
                out[name] = kind
    return out


def _coerce(kind: str, value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if kind == "boolean":
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        return value
    if kind == "integer":
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value.strip())
        return value
    if isinstance(value, str):  # number
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _where(path: Iterable[Any]) -> str:
    return "/".join(str(p) for p in path)


class ToolArguments:
    """One tool's check. `check(args)` → (the arguments as the tool reads them, None) or (args, what is wrong)."""

    __slots__ = ("schema", "_coercible", "_validator")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self._coercible = _coercible(schema)
        self._validator: Any = None

    def check(self, args: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        fixed = args
        for name, kind in self._coercible.items():
            if name in args and args[name] is not None:
                value = _coerce(kind, args[name])
                if value is not args[name]:
                    fixed = {**fixed, name: value}
        return fixed, self._problem(fixed)

    def _problem(self, args: dict[str, Any]) -> str | None:
        schema = self.schema
        required = schema.get("required") or ()
        missing = [k for k in required if k not in args]
        if missing:
            return f"missing required argument(s): {', '.join(missing)}"
        props = schema.get("properties") or {}
        if schema.get("additionalProperties") is False:
            extra = sorted(k for k in args if k not in props)
            if extra:
                return f"unexpected argument(s): {', '.join(extra)}"
        if self._validator is None:
            jsonschema = _jsonschema()
            self._validator = jsonschema.validators.validator_for(schema)(schema)
        error = _jsonschema().exceptions.best_match(self._validator.iter_errors(args))
        if error is None:
            return None
        where = _where(error.absolute_path)
        if error.validator == "type" and where:
            expected = error.validator_value
            names = "/".join(expected) if isinstance(expected, list) else str(expected)
            return f"argument {where!r} must be of type {names}, got {type(error.instance).__name__}"
        return f"argument {where!r}: {error.message}" if where else str(error.message)


def warm() -> None:
    """Import jsonschema and check one call through it, so a run's first tool call pays neither (a front's idle
    time after its handshake calls this; kgent.service.Service.warm_up)."""
    ToolArguments({"type": "object", "properties": {"path": {"type": "string"}}}).check({"path": "x"})


class ArgumentChecks:
    """The compiled checks of a set of tools, by name; a tool met later (a run's MCP or extension tools) is compiled
    when added. A check is shared while its tool's schema is the same object."""

    __slots__ = ("_by_name",)

    def __init__(self, tools: Iterable[Any] = ()) -> None:
        self._by_name: dict[str, ToolArguments] = {}
        self.add(tools)

    def add(self, tools: Iterable[Any], known: ArgumentChecks | None = None) -> None:
        for tool in tools:
            have = known._by_name.get(tool.name) if known is not None else None
            self._by_name[tool.name] = (
                have
                if have is not None and have.schema is tool.parameters
                else ToolArguments(tool.parameters)
            )

    def check(self, name: str, args: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        return self._by_name[name].check(args)
