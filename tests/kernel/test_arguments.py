"""The one argument validator: every tool's whole JSON Schema (not a subset) checks a call before it runs, with
messages that name the argument; what a model clearly means is read as meant; jsonschema loads on the first check."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import collect
from kgent.core.messages import ToolResultMessage
from kgent.kernel import AgentKernel, KernelConfig
from kgent.kernel.arguments import ArgumentChecks, ToolArguments, _fits
from kgent.providers.scripted import ScriptedProvider
from kgent.tools import CODING_TOOLS
from kgent.tools.base import CallDescription, ToolContext, ToolIntent, ToolOutput

READ = next(t for t in CODING_TOOLS() if t.name == "read").parameters


@pytest.mark.parametrize(
    ("schema", "args", "problem"),
    [
        (READ, {}, "missing required argument(s): path"),
        (READ, {"path": "a", "offset": 1, "mode": "x"}, "unexpected argument(s): mode"),
        (READ, {"path": 3}, "argument 'path' must be of type string, got int"),
        (READ, {"path": "a", "offset": 0}, "argument 'offset': 0 is less than the minimum of 1"),
        (READ, {"path": "a", "limit": "many"}, "argument 'limit' must be of type integer, got str"),
        (READ, {"path": "a", "limit": None}, "argument 'limit' must be of type integer, got NoneType"),
        (
            {"type": "object", "properties": {"edits": {"type": "array", "items": {"type": "integer"}}}},
            {"edits": [1, "two"]},
            "argument 'edits/1' must be of type integer, got str",
        ),
        ({"type": "object", "properties": {"level": {"enum": ["a", "b"]}}}, {"level": "c"}, None),
    ],
)
def test_problems_name_the_argument(
    schema: dict[str, Any], args: dict[str, Any], problem: str | None
) -> None:
    fixed, found = ToolArguments(schema).check(args)
    if problem is None:  # the enum case: jsonschema's own sentence, with the argument's name first
        assert found == "argument 'level': 'c' is not one of ['a', 'b']"
    else:
        assert found == problem
    assert fixed == args


def test_what_a_model_clearly_means_is_read_as_meant() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "x": {"type": "number"},
            "flag": {"type": "boolean"},
            "name": {"type": "string"},
        },
    }
    check = ToolArguments(schema)
    args = {"n": "12", "x": "1.5", "flag": "True", "name": "7"}
    assert check.check(args) == ({"n": 12, "x": 1.5, "flag": True, "name": "7"}, None)
    assert check.check({"n": 3.0}) == ({"n": 3}, None)
    same = {"n": 2, "flag": False}
    assert check.check(same)[0] is same  # nothing to read differently: the same dict
    assert check.check({"n": 2.5})[1] == "argument 'n' must be of type integer, got float"
    assert check.check({"flag": "yes"})[1] == "argument 'flag' must be of type boolean, got str"


def test_checks_are_compiled_once_and_shared_while_the_schema_is_the_same() -> None:
    tools = CODING_TOOLS()
    kernel_checks = ArgumentChecks(tools)
    run_checks = ArgumentChecks()
    run_checks.add(tools, known=kernel_checks)
    assert all(run_checks._by_name[t.name] is kernel_checks._by_name[t.name] for t in tools)


def test_jsonschema_is_loaded_by_the_first_call_that_needs_it_not_by_assembling_or_a_valid_call() -> None:
    code = (
        "import sys\n"
        "from kgent.kernel.arguments import ArgumentChecks\n"
        "from kgent.tools import CODING_TOOLS\n"
        "checks = ArgumentChecks(CODING_TOOLS())\n"
        "before = 'jsonschema' in sys.modules\n"
        "checks.check('read', {'path': 'a', 'offset': 2})\n"
        "checks.check('bash', {'command': 'ls', 'timeout': 1.5, 'background': False})\n"
        "checks.check('todo_write', {'todos': [{'content': 'c', 'status': 'pending'}]})\n"
        "valid = 'jsonschema' in sys.modules\n"
        "checks.check('read', {'path': 'a', 'offset': 0})\n"
        "print(before, valid, 'jsonschema' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split() == ["False", "False", "True"]


def _random_schema(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    if rng.random() < 0.7:
        schema["type"] = rng.choice(
            [
                "string",
                "integer",
                "number",
                "boolean",
                "null",
                "object",
                "array",
                ["string", "null"],
                ["strin", "string"],
            ]
        )
    if rng.random() < 0.2:
        schema["enum"] = rng.choice([["a", "b"], [1, True], ["x", None]])
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxItems"):
        if rng.random() < 0.1:
            schema[key] = rng.choice([0, 1, 2.5, True, "3"])
    if depth < 2 and rng.random() < 0.4:
        schema["properties"] = {
            rng.choice("abc"): _random_schema(rng, depth + 1) for _ in range(rng.randint(0, 3))
        }
    if depth < 2 and rng.random() < 0.2:
        schema["required"] = rng.sample("abc", rng.randint(0, 2))
    if depth < 2 and rng.random() < 0.3:
        schema["additionalProperties"] = rng.choice([True, False, {"type": "string"}])
    if depth < 2 and rng.random() < 0.3:
        schema["items"] = _random_schema(rng, depth + 1) if rng.random() < 0.8 else rng.choice([True, False])
    if rng.random() < 0.05:
        schema["pattern"] = "^a"
    return schema


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth < 2 and r < 0.2:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if depth < 2 and r < 0.45:
        return {rng.choice("abcd"): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return rng.choice([None, True, False, 0, 1, -2, 3.0, 2.5, float("nan"), "", "a", "x" * 3, []])


def test_a_call_passed_without_jsonschema_is_one_jsonschema_passes() -> None:
    """Soundness of the fast path: whatever it lets through, jsonschema (the whole schema) finds nothing wrong with."""
    import jsonschema

    rng = random.Random(37)
    passed = 0
    for _ in range(20_000):
        schema = _random_schema(rng)
        value = _random_value(rng)
        if _fits(schema, value):
            passed += 1
            validator = jsonschema.validators.validator_for(schema)(schema)
            assert list(validator.iter_errors(value)) == [], (schema, value)
    assert passed > 2_000  # the fast path is taken, not only the fallback


class LevelTool:
    """A tool as an MCP server or an extension declares one: a schema the old hand-rolled subset did not check."""

    name = "level"
    kind = "other"
    read_only = True
    intent = ToolIntent(effect="read")
    description = "Set a level."
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "level": {"enum": ["low", "high"]},
            "steps": {"type": "array", "items": {"type": "integer", "minimum": 0}},
            "count": {"type": "integer"},
        },
        "required": ["level"],
    }

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        return CallDescription(title="level")

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> None:
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.seen.append(args)
        return ToolOutput(content=json.dumps(args))


async def test_the_kernel_checks_any_tool_with_its_whole_schema(workspace: Path) -> None:
    tool = LevelTool()
    script = [
        [
            {"tool": "level", "args": {"level": "medium"}},
            {"tool": "level", "args": {"level": "low", "steps": [1, -2]}},
            {"tool": "level", "args": {"level": "high", "count": "4"}},
        ],
        [{"text": "done"}],
    ]
    provider = ScriptedProvider(script)
    kernel = AgentKernel(provider, tools=[tool], config=KernelConfig(mode="full"))
    run = kernel.create_run("go", workspace=workspace)
    await collect(run)
    results = [m for m in provider.requests[-1].messages if isinstance(m, ToolResultMessage)]
    assert [r.content for r in results] == [
        "invalid_arguments: argument 'level': 'medium' is not one of ['low', 'high']",
        "invalid_arguments: argument 'steps/1': -2 is less than the minimum of 0",
        '{"level": "high", "count": 4}',
    ]
    assert tool.seen == [
        {"level": "high", "count": 4}
    ]  # only the valid call ran, with the count read as meant
