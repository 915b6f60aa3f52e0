"""Service errors as JSON-RPC errors (codes and classification: kgent.service.errors), and the error members the
daemon writes itself."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcException

from kgent.service.errors import (
    CONFIG,
    CONFLICT,
    FAILED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    STORE,
    ServiceError,
    classify,
)

__all__ = [
    "CONFIG",
    "CONFLICT",
    "FAILED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "STORE",
    "ServiceError",
    "classify",
    "error_object",
    "to_jsonrpc",
]


def to_jsonrpc(exc: BaseException) -> JsonRpcException:
    err = classify(exc)
    return JsonRpcException(message=err.message, code=err.code, data=err.data())


def error_object(code: int, message: str, name: str | None = None) -> dict[str, Any]:
    """An `error` member for replies the daemon writes itself (framing errors, invalid requests)."""
    err: dict[str, Any] = {"code": code, "message": message}
    if name is not None:
        err["data"] = {"code": name}
    return err
