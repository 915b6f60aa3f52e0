"""Service errors as JSON-RPC errors (codes and classification: kgent.service.errors), and the error members the
daemon writes itself."""

from __future__ import annotations

from typing import Any

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
    "RpcError",
    "ServiceError",
    "classify",
    "to_jsonrpc",
]


class RpcError(Exception):
    """A JSON-RPC error: raised by a handler to answer its request with it, or set on one of the daemon's own requests
    that the client answered with an error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def error(self) -> dict[str, Any]:
        """The `error` member of a reply."""
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


def to_jsonrpc(exc: BaseException) -> RpcError:
    err = classify(exc)
    return RpcError(err.code, err.message, err.data())
