"""The calculator: exact arithmetic over an AST whitelist; anything else is refused."""

from __future__ import annotations

import pytest

from kgent.tools.base import ToolContext
from kgent.tools.calculator import CalculatorTool

calc = CalculatorTool()


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("1 + 2 * 3", "7"),
        ("(1 + 2) * 3", "9"),
        ("7 / 2", "3.5"),
        ("7 // 2", "3"),
        ("-7 % 3", "2"),
        ("2 ** 10", "1024"),
        ("2 ** -1", "0.5"),
        ("-(+3)", "-3"),
        ("0.1 + 0.2", "0.30000000000000004"),
        ("6 / 3", "2"),
        ("2 ** 100", str(2**100)),
    ],
)
async def test_arithmetic(ctx: ToolContext, expression: str, expected: str) -> None:
    out = await calc.run({"expression": expression}, ctx)
    assert not out.is_error and out.content == expected


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os')",
        "open('x')",
        "x + 1",
        "'a' * 3",
        "[1, 2]",
        "1 if 1 else 2",
        "2 << 3",
        "9 ** 9 ** 9",
        "(10 ** 5000) ** 20",
        "1 / 0",
        "(-8) ** 0.5",
        "2 +",
        "True + 1",
    ],
)
async def test_refused(ctx: ToolContext, expression: str) -> None:
    out = await calc.run({"expression": expression}, ctx)
    assert out.is_error, out.content


def test_metadata(ctx: ToolContext) -> None:
    assert calc.kind == "think" and calc.read_only
    assert calc.describe({"expression": "1+1"}, ctx).title == "Calculate 1+1"
