"""The one argument validator: each tool's JSON Schema, compiled once, checks a call's arguments before anything runs —
built-in, extension and MCP tools alike; the tools then read arguments that fit their schema.

`jsonschema` is imported on the first check it has to make (not when the kernel is assembled): arguments that
plainly fit a schema made of the common keywords (`_fits`: types, properties, required, enums of strings, bounds) need
no validator, so a run whose calls are all valid never loads it (~40 ms of CPU); anything else — a keyword `_fits` does
not know, a value it cannot vouch for, a call that does not fit — goes to jsonschema, which says what is wrong. What a
model commonly gets wrong and means clearly (`"5"` for an integer, `"true"` for a boolean, `3.0` for 3) is read as
meant before the check, as the tools' own readers did.
"""

from __future__ import annotations

import importlib
import operator
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


# The keywords `_fits` decides for itself (JSON Schema 2020-12, jsonschema's default draft); annotations have no
# say in validity. Any other keyword ($ref, anyOf, pattern, format, prefixItems, ...) leaves the call to jsonschema.
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment", "deprecated"})
_KEYWORDS = _ANNOTATIONS | {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
}
_TYPES = frozenset({"string", "object", "array", "boolean", "null", "integer", "number"})
_BOUNDS = (
    ("minimum", operator.ge),
    ("maximum", operator.le),
    ("exclusiveMinimum", operator.gt),
    ("exclusiveMaximum", operator.lt),
)
_LENGTHS = (("minLength", operator.ge), ("maxLength", operator.le))
_SIZES = (("minItems", operator.ge), ("maxItems", operator.le))


def _is(value: Any, kind: Any) -> bool:
    """Whether `value` is of the JSON type `kind` as jsonschema's default type checker says (False also when a type
    name is not one it knows: jsonschema then decides, and raises)."""
    if isinstance(kind, list):
        return all(k in _TYPES for k in kind) and any(_is(value, k) for k in kind)
    if kind == "string":
        return isinstance(value, str)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "integer":
        return type(value) is int or (type(value) is float and value.is_integer())
    if kind == "number":
        return type(value) is int or type(value) is float
    return False


def _fits(schema: Any, value: Any) -> bool:
    """True only when jsonschema would find nothing wrong with `value` under `schema`; False when it might (then
    jsonschema checks it). Decides the common keywords alone, for the JSON values a call's arguments are made of."""
    if not isinstance(schema, dict) or not all(key in _KEYWORDS for key in schema):
        return False
    if "type" in schema and not _is(value, schema["type"]):
        return False
    if (
        "enum" in schema
    ):  # a string among strings (jsonschema's own equality, which tells True from 1, agrees)
        enum = schema["enum"]
        if not (isinstance(value, str) and isinstance(enum, list) and value in enum):
            return False
    kind = type(value)
    if kind is int or kind is float:
        for key, holds in _BOUNDS:
            if key in schema:
                bound = schema[key]
                if not (type(bound) in (int, float) and holds(value, bound)):
                    return False
    elif kind is str or kind is list:  # a string's length, a list's size
        for key, holds in _LENGTHS if kind is str else _SIZES:
            if key in schema:
                bound = schema[key]
                if not (type(bound) is int and holds(len(value), bound)):
                    return False
        if kind is list and "items" in schema and not all(_fits(schema["items"], item) for item in value):
            return False
    elif kind is dict:
        return _fits_object(schema, value)
    elif not (kind is bool or value is None):
        return False  # not a JSON value: jsonschema decides
    return True


def _fits_object(schema: dict[str, Any], value: dict[str, Any]) -> bool:
    props = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not (
        isinstance(props, dict)
        and isinstance(required, list)
        and (extra is True or extra is False or isinstance(extra, dict))
    ):
        return False
    if any(not isinstance(name, str) or name not in value for name in required):
        return False
    for name, item in value.items():
        if name in props:
            if not _fits(props[name], item):
                return False
        elif extra is False or (extra is not True and not _fits(extra, item)):
            return False
    return True


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
        if _fits(schema, args):
            return None
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
    """Check one call, so a run's first tool call finds the checker ready (a front's idle time after its handshake
    calls this; kgent.service.Service.warm_up). A valid call needs no jsonschema: it is left to the first call that
    does not plainly fit its schema, which is rare."""
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
