"""The wire models' common ground: the two model bases (what a client sends, what the daemon sends), the shared
field types, and how a pydantic ValidationError becomes the daemon's ParamsError (-32602, field path + what was
expected).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails, PydanticCustomError
from typing_extensions import TypeAliasType

from kgent.core import events
from kgent.core.messages import StopReason as _StopReason
from kgent.service.handshake import MODES, ParamsError, normalize_mode


class Params(BaseModel):
    """What a client sends: camelCase keys only, exact JSON types (no "1" for 1), unknown keys ignored."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        strict=True,
        frozen=True,
        extra="ignore",
        defer_build=True,
    )

    @classmethod
    def parse(cls, params: Any) -> Self:
        """`params` (omitted params count as `{}`) as this model; ParamsError if they do not fit."""
        data = {} if params is None else params
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise params_error(exc) from None


class Payload(BaseModel):
    """What the daemon sends. Built from Python names or validated from wire dicts; a key the model does not know
    is a bug (the contract and protocol.schema.json must say it first)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=True,
        strict=True,
        frozen=True,
        extra="forbid",
        defer_build=True,
    )

    def wire(self) -> dict[str, Any]:
        """The JSON object to send: camelCase keys, exactly the fields that were given (a None given is a null)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class OpenPayload(Payload):
    """A payload whose other keys pass through (session entries and messages: their kinds and fields are open)."""

    model_config = ConfigDict(extra="allow")


# -- shared field types --------------------------------------------------------------------------------------------

NonEmptyStr = Annotated[str, Field(min_length=1)]
NonBlankStr = Annotated[str, Field(pattern=r"\S")]

ToolKind = TypeAliasType("ToolKind", events.ToolKind)
RunStatus = TypeAliasType("RunStatus", events.RunStatus)
PermissionOptionKind = TypeAliasType("PermissionOptionKind", events.PermissionOptionKind)
PermissionMode = TypeAliasType("PermissionMode", Literal["plan", "ask", "auto", "full", "risk_based"])
ToolStatus = TypeAliasType("ToolStatus", Literal["pending", "in_progress", "completed", "failed"])
StopReason = TypeAliasType("StopReason", _StopReason)


def _absolute(value: str) -> str:
    if "\x00" in value or not os.path.isabs(value):
        raise PydanticCustomError("invalid_params", "must be an absolute path")
    return value


def _mode(value: str) -> str:
    mode = normalize_mode(value)
    if mode is None:
        raise PydanticCustomError(
            "unknown_permission_mode",
            "must be one of {modes} (got {got})",
            {"modes": ", ".join(MODES), "got": repr(value[:40])},
        )
    return mode


def _expect(phrase: str) -> WrapValidator:
    """Any failure of the wrapped type is reported as `phrase` (one message for wrong type and wrong value)."""

    def check(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise PydanticCustomError("invalid_params", phrase) from None

    return WrapValidator(check)


PositiveNumber = Annotated[float, Field(gt=0, allow_inf_nan=False), _expect("must be a positive number")]
AbsolutePath = Annotated[
    NonEmptyStr, AfterValidator(_absolute), Field(description="An absolute path (of the daemon's machine).")
]
Mode = Annotated[
    NonEmptyStr,
    AfterValidator(_mode),
    Field(
        description="A permission mode: plan, ask, auto, full or risk_based (case-insensitive, `-` = `_`; the "
        "aliases interactive (= ask) and allow_all (= full) are accepted).",
    ),
]


class Cost(Payload):
    amount: float = Field(description="An estimate, from the model's price.")
    currency: str = Field(description='"USD".')


class Tokens(Payload):
    """A model turn's tokens as its session message stores them."""

    input_tokens: int = Field(
        description="Input billed at the plain input rate (not read from or written to the cache)."
    )
    output_tokens: int = Field(description="Output, thinking included.")
    cache_read_tokens: int = Field(description="Input read from the provider's prompt cache.")
    cache_write_tokens: int = Field(description="Input written to the prompt cache.")
    cost: Cost | None = Field(default=None, description="Absent when the model has no known price.")


class Usage(Tokens):
    """Tokens, their estimated cost when the model has a known price, and the text to show (protocol.md § usage)."""

    text: str = Field(
        description='What a front shows of it: "1200 in (900 cached) / 40 out tokens · ≈ $0.0012" (all input, '
        "its cached share, the output; the cost only with a price)."
    )


# -- ValidationError → ParamsError ---------------------------------------------------------------------------------

# Raised by our own validators: their message says what was expected.
_OURS = frozenset({"invalid_params", "unknown_permission_mode"})
_PHRASES = {
    "missing": "is required",
    "string_type": "must be a string",
    "string_too_short": "must be a non-empty string",
    "bool_type": "must be a boolean",
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "list_type": "must be an array",
    "too_short": "must not be empty",
    "literal_error": "must be {expected}",
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
}


def _path(loc: tuple[int | str, ...]) -> str:
    """`prompt[0].resource.text`. Union members are tagged with labels that contain a space ("block prompt"); no
    wire key does, so the labels are left out and the path names only keys and indexes."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif " " not in part:
            out += f".{part}" if out else part
    return out


def _phrase(error: ErrorDetails) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind in _OURS:
        return error["msg"]
    if kind == "string_pattern_mismatch" and ctx.get("pattern") == r"\S":
        return "must not be blank"
    template = _PHRASES.get(kind)
    if template is None:
        return f"is not valid ({error['msg']})"
    return template.format(
        **{k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in ctx.items()}
    )


def params_error(exc: ValidationError) -> ParamsError:
    """The first error, as `invalid params: '<field path>' <what was expected>`."""
    return first_params_error(exc.errors(include_url=False))


def first_params_error(errors: Sequence[ErrorDetails]) -> ParamsError:
    """`params_error` for a list of pydantic's error details (a web framework's validation errors)."""
    error = errors[0]
    path, phrase = _path(error["loc"]), _phrase(error)
    code = error["type"] if error["type"] in _OURS else "invalid_params"
    return ParamsError(
        f"invalid params: '{path}' {phrase}" if path else f"invalid params: params {phrase}", code
    )
