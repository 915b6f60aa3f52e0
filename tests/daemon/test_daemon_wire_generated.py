"""protocol.schema.json and the VS Code shim's wire.generated.ts (from the wire models) and the boot path's
tables.json (from the kernel's registries) are generated and committed: they must be what the generator makes now.
The TypeScript generator on its own, and protocol.ts (the hand-written part of the shim's protocol) against the
schema."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kgent.service.wire import schema, typescript
from kgent.service.wire.__main__ import SCHEMA_FILE, TABLES_FILE, TS_FILE, generated, main

ROOT = Path(__file__).resolve().parents[2]
REFRESH = f"run `.venv/bin/{schema.COMMAND}` from the repository root and commit the result"


@pytest.mark.parametrize("rel", [SCHEMA_FILE, TS_FILE, TABLES_FILE])
def test_generated_files_are_fresh(rel: str) -> None:
    path = ROOT / rel
    if not path.is_file() or path.read_text(encoding="utf-8") != generated()[rel]:
        pytest.fail(f"{rel} is stale: {REFRESH}", pytrace=False)


def test_the_command_writes_and_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert "stale" in capsys.readouterr().err
    assert main(["--root", str(tmp_path)]) == 0  # the folders made as needed
    assert main(["--check", "--root", str(tmp_path)]) == 0
    assert json.loads((tmp_path / SCHEMA_FILE).read_text())["$schema"] == schema.DIALECT
    assert json.loads((tmp_path / TABLES_FILE).read_text())["modes"][0] == "plan"


def test_the_module_runs_as_documented() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kgent.service.wire", "--check", "--root", str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_the_schema_lists_every_method_with_its_types() -> None:
    document = json.loads(generated()[SCHEMA_FILE])
    defs = document["$defs"]
    methods = {m["method"]: m for m in document["x-methods"]}
    assert list(methods) == [m.name for m in schema.METHODS]
    for m in methods.values():
        for part in ("params", "result"):
            ref = m.get(part, {}).get("$ref")
            assert ref is None or ref.removeprefix("#/$defs/") in defs, (m, part)
    assert methods["shutdown"]["result"] == {"type": "null"} and "result" not in methods["exit"]
    text = json.dumps(defs)
    assert '"title": "' not in text  # no generated titles (`title` properties stay)
    assert '"additionalProperties": false' not in text  # v1 may add fields: clients ignore them


# -- the TypeScript generator ------------------------------------------------------------------------------------


def ts(defs: dict[str, Any]) -> str:
    return typescript.generate({"$defs": defs}, "gen").removeprefix(typescript.header("gen") + "\n")


def test_objects_enums_and_unions() -> None:
    defs = {
        "Kind": {"enum": ["a", "b"], "type": "string"},
        "Thing": {
            "description": "A thing.",
            "type": "object",
            "properties": {
                "type": {"const": "thing", "type": "string"},
                "kind": {"$ref": "#/$defs/Kind"},
                "kinds": {"type": "array", "items": {"$ref": "#/$defs/Kind"}},
                "state": {"enum": ["on", "off"], "type": "string"},
                "note": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "description": "Why.",
                },
                "tags": {
                    "type": "object",
                    "additionalProperties": {"type": "array", "items": {"type": "string"}},
                },
                "args": {"type": "object", "additionalProperties": True},
                "n": {"type": "integer", "minimum": 0},
                "odd-key": {"type": "boolean"},
            },
            "required": ["type", "kind", "kinds", "state", "tags", "args", "n", "odd-key"],
        },
        "Open": {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "additionalProperties": True,
            "required": ["id"],
        },
        "Empty": {"type": "object", "properties": {}},
        "Either": {"oneOf": [{"$ref": "#/$defs/Thing"}, {"$ref": "#/$defs/Open"}]},
        "Any": {},
    }
    assert (
        ts(defs)
        == """export type Any = unknown;

export type Either = Thing | Open;

export type Empty = Record<string, never>;

export type Kind = "a" | "b";

export interface Open {
  id: string;
  [key: string]: unknown;
}

/** A thing. */
export interface Thing {
  type: "thing";
  kind: Kind | (string & {});
  kinds: (Kind | (string & {}))[];
  state: "on" | "off" | (string & {});
  /** Why. */
  note?: string | null;
  tags: Record<string, string[]>;
  args: Record<string, unknown>;
  n: number;
  "odd-key": boolean;
}
"""
    )


def test_long_unions_and_docs_wrap() -> None:
    names = [f"AVeryLongTypeName{i}" for i in range(9)]
    defs: dict[str, Any] = {n: {"type": "object", "properties": {"n": {"type": "number"}}} for n in names}
    out = ts({**defs, "U": {"oneOf": [{"$ref": f"#/$defs/{n}"} for n in names], "description": "word " * 40}})
    out = out[out.index("/**") :]
    assert out.startswith("/**\n * word word")
    assert "export type U =\n  | AVeryLongTypeName0\n" in out and out.endswith("  | AVeryLongTypeName8;\n")
    assert all(len(line) <= 120 for line in out.splitlines())


@pytest.mark.parametrize(
    "bad",
    [
        {"allOf": [{"type": "string"}]},
        {"type": "string", "format": "uri"},
        {"type": "tuple"},
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "additionalProperties": {"type": "string"},
        },
    ],
)
def test_unknown_constructs_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ts({"X": {"type": "object", "properties": {"x": bad}}})


# -- protocol.ts: the hand-written part of the shim ------------------------------------------------------------------

PROTOCOL_TS = (ROOT / "editors/vscode/src/protocol.ts").read_text(encoding="utf-8")
# The method name may stand on a line of its own (biome wraps a long declaration): `(\n  "agent/x",\n)`.
MESSAGE = re.compile(r'new (RequestType0?|NotificationType0?)(?:<([^>]*)>)?\(\s*"([^"]+)",?\s*\)')


def test_protocol_ts_message_types_are_the_schemas() -> None:
    """Each method the schema lists has its message type in protocol.ts, over the generated params/result types."""
    declared = {
        method: (kind, [a.strip() for a in args.split(",") if a.strip()])
        for kind, args, method in MESSAGE.findall(PROTOCOL_TS)
    }
    for m in schema.METHODS:
        if m.name in ("exit", "shutdown"):
            assert declared[m.name][0] in ("NotificationType0", "RequestType0"), m.name
            continue
        kind, args = declared[m.name]
        names = [getattr(t, "__name__", None) for t in (m.params, m.result) if t is not None]
        expected = [f"W.{n}" if n != "AgentEventParams" else n for n in names]
        assert args[: len(expected)] == expected, (m.name, args)
        assert kind.startswith("Request" if m.kind == "request" else "Notification"), m.name
    assert re.search(rf"PROTOCOL_VERSION = {schema.PROTOCOL_VERSION};", PROTOCOL_TS)


def test_protocol_ts_re_exports_the_generated_types() -> None:
    names = set(re.findall(r"^export (?:interface|type) (\w+)", generated()[TS_FILE], re.M))
    block = PROTOCOL_TS[PROTOCOL_TS.index("export type {") : PROTOCOL_TS.index('} from "./wire.generated"')]
    table = {
        "Methods",
        "MethodName",
    }  # the method table, not a wire type: test/methods.test.ts checks protocol.ts by it
    assert (
        set(re.findall(r"\b(\w+),", block)) == names - {"AgentEventParams"} - table
    )  # that one is widened there
