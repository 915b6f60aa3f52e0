"""JSON Schema checks for registrations (the schema itself) and uses (a value against it), with `jsonschema`."""

from __future__ import annotations

import functools
import json
from typing import Any


def _jsonschema() -> Any:
    """The jsonschema package, imported on first use (~0.1 s): registrations and hooks with schemas are rare."""
    import jsonschema  # type: ignore[import-untyped]

    return jsonschema


@functools.lru_cache(maxsize=256)
def _check(text: str) -> str | None:
    schema = json.loads(text)
    jsonschema = _jsonschema()
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        return str(exc.message)
    return None


def check_schema(schema: Any) -> str | None:
    """None when `schema` is a valid JSON Schema (of its declared draft, else the latest); else what is wrong."""
    if not isinstance(schema, dict):
        return "a schema must be a JSON object"
    try:
        text = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError) as exc:
        return f"not JSON: {exc}"
    return _check(text)


def check_value(schema: dict[str, Any], value: Any) -> str | None:
    """None when `value` fits `schema` (a schema check_schema accepted); else the first problem, with its path."""
    jsonschema = _jsonschema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else str(error.message)
