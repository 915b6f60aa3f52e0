# Concept: tool arguments — lenient, typed reading of a call's JSON arguments, and error results.
"""Read tool arguments with clear errors, and build error `ToolOutput`s."""

from __future__ import annotations

from typing import Any

from kgent.core.errors import KgentError
from kgent.tools.base import ToolOutput


class ToolArgError(KgentError):
    """An argument is missing or has the wrong type."""

    code = "invalid_tool_args"


def str_arg(
    args: dict[str, Any], name: str, *, default: str | None = None, required: bool = False
) -> str | None:
    """A string argument; missing → default (or an error when required)."""
    value = args.get(name)
    if value is None:
        if required:
            raise ToolArgError(f"Missing required argument: {name}")
        return default
    if not isinstance(value, str):
        raise ToolArgError(f"Argument {name} must be a string")
    return value


def req_str(args: dict[str, Any], name: str) -> str:
    """A required string argument."""
    value = str_arg(args, name, required=True)
    assert value is not None
    return value


def int_arg(
    args: dict[str, Any], name: str, *, default: int | None = None, minimum: int | None = None
) -> int | None:
    """An integer argument; integral floats and digit strings are accepted."""
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        raise ToolArgError(f"Argument {name} must be an integer")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if not isinstance(value, int):
        raise ToolArgError(f"Argument {name} must be an integer")
    if minimum is not None and value < minimum:
        raise ToolArgError(f"Argument {name} must be >= {minimum}")
    return value


def num_arg(args: dict[str, Any], name: str) -> float | None:
    """A positive number argument, or None when absent."""
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ToolArgError(f"Argument {name} must be a number") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ToolArgError(f"Argument {name} must be a positive number")
    return float(value)


def bool_arg(args: dict[str, Any], name: str, default: bool = False) -> bool:
    """A boolean argument; 'true'/'false' strings are accepted."""
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise ToolArgError(f"Argument {name} must be a boolean")
    return value


def error_output(message: str, **details: Any) -> ToolOutput:
    """An error result."""
    return ToolOutput(content=message, is_error=True, details=details)
