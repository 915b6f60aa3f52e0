"""protocol.schema.json: every message of the protocol (protocol.md § Method index) and the JSON Schema (draft 2020-12)
of its params and result, made from the wire models.

The methods come from the one table, kgent.service.wire.methods. The document's `$defs` hold every type; `x-methods` lists the methods with a `$ref` to their params and result
(`null` where there are none). Daemon → client objects carry no `additionalProperties: false`: a later version of
protocol 1 may add fields, which clients must ignore (protocol.md § Versioning).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode

from kgent.service.handshake import PROTOCOL_VERSION
from kgent.service.wire.methods import METHODS, Direction, Method

DIALECT = "https://json-schema.org/draft/2020-12/schema"
COMMAND = "python -m kgent.service.wire"
_IN: Direction = "client → daemon"


class _Generator(GenerateJsonSchema):
    def field_title_should_be_set(self, schema: Any) -> bool:
        return False  # the property name says it


def _mode(method: Method, part: str) -> JsonSchemaMode:
    """Validation for what clients send, serialization for what the daemon sends."""
    sent_by_client = (method.direction == _IN) == (part == "params") or method.direction == "both"
    return "validation" if sent_by_client else "serialization"


def _clean(node: Any, *, keys: bool = False) -> Any:
    """Without titles and `additionalProperties: false`, descriptions on one line; `keys`: `node` maps names to
    schemas."""
    if isinstance(node, list):
        return [_clean(n) for n in node]
    if not isinstance(node, dict):
        return node
    if keys:
        return {k: _clean(v) for k, v in node.items()}
    out = {}
    for key, value in node.items():
        if key == "title" or (key == "additionalProperties" and value is False):
            continue
        if key == "description" and isinstance(value, str):
            value = " ".join(value.split())
        out[key] = _clean(value, keys=key in ("properties", "$defs"))
    return out


def build() -> dict[str, Any]:
    """The schema document."""
    inputs = [
        ((m.name, part), _mode(m, part), TypeAdapter(getattr(m, part)))
        for m in METHODS
        for part in ("params", "result")
        if getattr(m, part) is not None
    ]
    refs, defs = TypeAdapter.json_schemas(inputs, ref_template="#/$defs/{model}", schema_generator=_Generator)
    ref_of = {key: ref for (key, _), ref in refs.items()}
    methods = []
    for m in METHODS:
        entry: dict[str, Any] = {"method": m.name, "direction": m.direction, "kind": m.kind}
        for part in ("params", "result"):
            if (m.name, part) in ref_of:
                entry[part] = ref_of[m.name, part]
            elif part == "result" and m.kind == "request":
                entry[part] = {"type": "null"}
        methods.append(entry)
    return {
        "$schema": DIALECT,
        "title": f"Kgent daemon protocol, version {PROTOCOL_VERSION}",
        "description": f"Generated from server/kgent/service/wire by `{COMMAND}`; do not edit. The contract in words "
        "is protocol.md.",
        "x-protocol-version": PROTOCOL_VERSION,
        "x-methods": methods,
        "$defs": _clean(defs.get("$defs", {}), keys=True),
    }


def render(document: dict[str, Any]) -> str:
    """The committed file's text."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
