"""The one place where exceptions get wire terms (codes in protocol.md § Errors), for every front: the daemon sends
them as JSON-RPC errors, the HTTP front as status codes with the same body.

`data` is always `{"code": <stable snake_case name>, ...}`; never a traceback or a local path. An unexpected
exception is a bug: it is logged with its traceback under an incident id, and the client gets only the id.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from kgent.core.errors import ConfigError, KgentError, RunStateError, SessionError, SessionNotFound
from kgent.service.handshake import ParamsError

log = logging.getLogger("kgent.service")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
CONFIG = -32001
NOT_FOUND = -32002
CONFLICT = -32003
STORE = -32004
FAILED = -32005

_NOT_FOUND_CODES = frozenset({"session_not_found", "entry_not_found", "run_not_found"})
_PARAMS_CODES = frozenset({"invalid_session_id", "invalid_params"})


class ServiceError(Exception):
    """An error the service (or a front) raises on purpose, already in wire terms (each front maps them at its
    edge: JSON-RPC errors, HTTP statuses, ACP errors)."""

    def __init__(self, code: int, message: str, name: str, **extra: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.name = name
        self.extra = extra

    def data(self) -> dict[str, Any]:
        return {"code": self.name, **self.extra}


def classify(exc: BaseException) -> ServiceError:
    """Wire terms for any exception a handler let through."""
    if isinstance(exc, ServiceError):
        return exc
    if isinstance(exc, ParamsError):
        return ServiceError(INVALID_PARAMS, str(exc), exc.code)
    if isinstance(exc, KgentError):
        name = exc.code
        if name in _PARAMS_CODES:
            return ServiceError(INVALID_PARAMS, exc.message, name)
        if isinstance(exc, SessionNotFound) or name in _NOT_FOUND_CODES:
            return ServiceError(NOT_FOUND, exc.message, name)
        if isinstance(exc, ConfigError):
            return ServiceError(CONFIG, exc.message, name)
        if isinstance(exc, RunStateError):
            return ServiceError(CONFLICT, exc.message, name)
        if isinstance(exc, SessionError):
            return ServiceError(STORE, exc.message, name)
        return ServiceError(FAILED, exc.message, name)
    incident = os.urandom(6).hex()
    log.error("internal error (incident %s)", incident, exc_info=exc)
    return ServiceError(
        INTERNAL_ERROR, f"internal error (incident {incident})", "internal_error", incident=incident
    )
