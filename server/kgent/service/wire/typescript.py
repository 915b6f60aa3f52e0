"""protocol.schema.json → the VS Code shim's TypeScript types (editors/vscode/src/wire.generated.ts).

One declaration per `$defs` entry: objects become interfaces, the rest type aliases. Covers the JSON Schema the wire
models produce and refuses anything else, so a new construct fails here instead of turning into `unknown`.
"""

from __future__ import annotations

import json
import re
import textwrap
from typing import Any

OPEN = (
    "(string & {})"  # "and any other string": enumerations the daemon sends grow (protocol.md § Versioning)
)
_KNOWN = frozenset(
    {
        "$ref",
        "const",
        "enum",
        "anyOf",
        "oneOf",
        "type",
        "items",
        "properties",
        "required",
        "additionalProperties",
        "description",
        "default",
        "discriminator",
        "pattern",
        "minLength",
        "maxLength",
        "minItems",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
    }
)
_SCALARS = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "null": "null"}
_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


def header(command: str) -> str:
    return (
        f"// Generated from protocol.schema.json by `{command}` (from the daemon's wire models): do not edit.\n"
        "// The hand-written part of the protocol (message types, method names, helpers) is protocol.ts.\n"
        "//\n"
        "// Optional fields may be absent or null. Enumerations the daemon sends are open: a field typed by one also\n"
        "// takes strings this version does not know (protocol.md, Versioning), hence `Kind | (string & {})`.\n"
    )


def generate(document: dict[str, Any], command: str) -> str:
    """The whole generated file."""
    defs: dict[str, Any] = document["$defs"]
    parts = [header(command)]
    parts += [_declaration(name, defs[name], defs) for name in sorted(defs)]
    if "x-methods" in document:
        parts.append(_methods(document["x-methods"], defs))
    return "\n".join(parts)


def _part(entry: dict[str, Any], part: str, defs: dict[str, Any]) -> str:
    schema = entry.get(part)
    if schema is None:
        return "undefined" if part == "result" and entry["kind"] == "notification" else "null"
    return " | ".join(m for m in _members(schema, defs) if m != OPEN)


def _methods(methods: list[dict[str, Any]], defs: dict[str, Any]) -> str:
    """The method table (kgent.service.wire.methods): each method's direction, kind, params and result types."""
    lines = [
        "/** Every method of the protocol, from the method table (kgent.service.wire.methods): who sends it, whether it",
        " * is answered, its params and its result (`null`: none; `undefined`: a notification has no answer). */",
        "export interface Methods {",
    ]
    for m in methods:
        direction = json.dumps(m["direction"], ensure_ascii=False)
        lines += [
            f"  {json.dumps(m['method'])}: {{",
            f"    direction: {direction}; kind: {json.dumps(m['kind'])};",
            f"    params: {_part(m, 'params', defs)}; result: {_part(m, 'result', defs)};",
            "  };",
        ]
    lines += [
        "}",
        "",
        "export type MethodName = keyof Methods;",
        "",
        "export const METHOD_NAMES: readonly MethodName[] = [",
    ]
    lines += [f"  {json.dumps(m['method'])}," for m in methods]
    lines.append("];")
    return "\n".join(lines) + "\n"


def _doc(text: str | None, indent: str) -> str:
    if not text:
        return ""
    text = " ".join(text.split()).replace("*/", "*\\/")
    lines = textwrap.wrap(text, 116 - len(indent))
    if len(lines) == 1:
        return f"{indent}/** {lines[0]} */\n"
    return f"{indent}/**\n" + "".join(f"{indent} * {line}\n" for line in lines) + f"{indent} */\n"


def _is_enum(schema: dict[str, Any]) -> bool:
    return "enum" in schema and all(isinstance(v, str) for v in schema["enum"])


def _declaration(name: str, schema: dict[str, Any], defs: dict[str, Any]) -> str:
    doc = _doc(schema.get("description"), "")
    if schema.get("type") == "object" and schema.get("properties"):
        return f"{doc}export interface {name} {_body(schema, defs, '')}\n"
    members = _members(schema, defs, open_enum=False)
    one_line = f"export type {name} = {' | '.join(members)};"
    if len(one_line) <= 116:
        return f"{doc}{one_line}\n"
    return (
        f"{doc}export type {name} =\n" + "".join(f"  | {m}\n" for m in members[:-1]) + f"  | {members[-1]};\n"
    )


def _body(schema: dict[str, Any], defs: dict[str, Any], indent: str) -> str:
    _check(schema)
    inner = indent + "  "
    required = set(schema.get("required", ()))
    lines = []
    for prop, sub in schema["properties"].items():
        key = prop if _IDENT.match(prop) else json.dumps(prop)
        mark = "" if prop in required else "?"
        lines.append(
            f"{_doc(sub.get('description'), inner)}{inner}{key}{mark}: {' | '.join(_members(sub, defs))};\n"
        )
    extra = schema.get("additionalProperties")
    if extra is True:
        lines.append(f"{inner}[key: string]: unknown;\n")
    elif extra is not None:
        raise ValueError(f"unsupported: additionalProperties {extra!r} next to properties")
    return "{\n" + "".join(lines) + indent + "}"


def _members(schema: dict[str, Any], defs: dict[str, Any], *, open_enum: bool = True) -> list[str]:
    """The union members of `schema`'s type."""
    _check(schema)
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return [name, OPEN] if _is_enum(defs[name]) else [name]
    if "const" in schema:
        return [json.dumps(schema["const"])]
    if "enum" in schema:
        return [json.dumps(v) for v in schema["enum"]] + ([OPEN] if open_enum and _is_enum(schema) else [])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return _unique(m for sub in schema[key] for m in _members(sub, defs))
    kind = schema.get("type")
    if kind in _SCALARS:
        return [_SCALARS[kind]]
    if kind == "array":
        items = _members(schema.get("items", {}), defs)
        return [f"({' | '.join(items)})[]" if len(items) > 1 else f"{items[0]}[]"]
    if kind == "object":
        return [_object(schema, defs)]
    if kind is None:
        return ["unknown"]
    raise ValueError(f"unsupported type {kind!r}")


def _object(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if schema.get("properties"):
        return " ".join(_body(schema, defs, "").split())  # inline, on one line
    extra = schema.get("additionalProperties")
    if extra is True or extra == {}:
        return "Record<string, unknown>"
    if isinstance(extra, dict):
        return f"Record<string, {' | '.join(_members(extra, defs))}>"
    return "Record<string, never>"


def _unique(members: Any) -> list[str]:
    out: list[str] = []
    for m in members:
        if m not in out and not (m == OPEN and "string" in out):
            out.append(m)
    return out


def _check(schema: dict[str, Any]) -> None:
    unknown = set(schema) - _KNOWN
    if unknown:
        raise ValueError(f"unsupported JSON Schema keywords: {sorted(unknown)}")
