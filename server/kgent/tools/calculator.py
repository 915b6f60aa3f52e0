# Concept: the calculator tool — exact arithmetic on a parsed expression tree, never eval.
"""`CalculatorTool`: evaluate + - * / // % ** and unary ± over numbers, with size caps against abuse."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from kgent.core.events import ToolKind
from kgent.tools.base import (
    CallDescription,
    FileChangePreview,
    ToolContext,
    ToolIntent,
    ToolOutput,
    error_output,
)

MAX_EXPRESSION = 1000
MAX_RESULT_BITS = 14_000  # ~4,200 digits: below Python's int-to-str limit

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


class CalcError(ValueError):
    """The expression is not allowed or cannot be evaluated."""


def _bits(x: int | float) -> int:
    return x.bit_length() if isinstance(x, int) else 64


def _power(base: int | float, exp: int | float) -> int | float:
    if isinstance(exp, int) and isinstance(base, int) and exp > 0 and abs(base) > 1:
        if math.log2(abs(base)) * exp > MAX_RESULT_BITS:
            raise CalcError("Result is too large")
    if abs(exp) > 1_000_000 and not (isinstance(base, int) and abs(base) <= 1):
        raise CalcError("Exponent is too large")
    result = operator.pow(base, exp)
    if not isinstance(result, int | float):
        raise CalcError("Result is a complex number")
    return result


def _eval(node: ast.AST) -> int | float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value  # type: ignore[return-value]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        value = _eval(node.operand)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        fn = _BINARY.get(type(node.op))
        if fn is None:
            raise CalcError(f"Operator not allowed: {type(node.op).__name__}")
        if isinstance(node.op, ast.Mult) and _bits(left) + _bits(right) > MAX_RESULT_BITS:
            raise CalcError("Result is too large")
        return fn(left, right)  # type: ignore[no-any-return]
    raise CalcError(f"Not allowed in an expression: {type(node).__name__}")


def evaluate(expression: str) -> int | float:
    """Evaluate an arithmetic expression safely; raises CalcError."""
    if len(expression) > MAX_EXPRESSION:
        raise CalcError(f"Expression is longer than {MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as e:
        raise CalcError(f"Invalid expression: {e.msg}") from None
    try:
        return _eval(tree)
    except ZeroDivisionError:
        raise CalcError("Division by zero") from None
    except (OverflowError, RecursionError):
        raise CalcError("Result is out of range") from None


def format_number(value: int | float) -> str:
    """Integers exactly; floats in shortest round-trip form (integral floats without '.0')."""
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return repr(value)
    return str(value)


class CalculatorTool:
    """Evaluate arithmetic."""

    name = "calculator"
    kind: ToolKind = "think"
    read_only = True
    intent = ToolIntent(effect="think", verb="evaluates an arithmetic expression")
    description = (
        "Evaluate an arithmetic expression exactly: numbers, + - * / // % **, unary + and -, and parentheses. "
        "Use it instead of doing arithmetic in your head."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "expression": {"type": "string", "description": "Expression, e.g. '(2 + 3) * 4 ** 2'"}
        },
        "required": ["expression"],
        "additionalProperties": False,
    }

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        """'Calculate <expression>'."""
        return CallDescription(title=f"Calculate {str(args.get('expression', ''))[:80]}")

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        """Calculating changes nothing."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Evaluate the expression."""
        try:
            value = evaluate(args["expression"])  # checked against `parameters` (kgent.kernel.arguments)
            text = format_number(value)
        except (CalcError, ValueError) as e:  # ValueError: int too large to print
            return error_output(str(e))
        return ToolOutput(content=text, details={"value": text})
