"""Error mapping in one place: each error kind gets its documented code; a bug shows only an incident id."""

from __future__ import annotations

import logging

import pytest

from kgent.context.compaction import CompactionError
from kgent.core.errors import (
    ConfigError,
    KgentError,
    ProviderError,
    RunStateError,
    SessionError,
    SessionNotFound,
)
from kgent.daemon.errors import ServiceError, classify, to_jsonrpc
from kgent.service.handshake import ParamsError


@pytest.mark.parametrize(
    ("exc", "code", "name"),
    [
        (ParamsError("invalid params: 'x' is required"), -32602, "invalid_params"),
        (ConfigError("no key", code="missing_api_key"), -32001, "missing_api_key"),
        (ConfigError("bad workspace"), -32001, "config_error"),
        (SessionNotFound("no session 'x'"), -32002, "session_not_found"),
        (SessionError("invalid session id", code="invalid_session_id"), -32602, "invalid_session_id"),
        (SessionError("disk full"), -32004, "session_error"),
        (KgentError("no entry", code="entry_not_found"), -32002, "entry_not_found"),
        (RunStateError("busy"), -32003, "run_state_error"),
        (CompactionError("bad summary"), -32005, "compaction_failed"),
        (ProviderError("503", code="provider_unavailable"), -32005, "provider_unavailable"),
        (ServiceError(-32003, "busy", "session_busy", runId="r1"), -32003, "session_busy"),
    ],
)
def test_codes(exc: Exception, code: int, name: str) -> None:
    err = classify(exc)
    assert (err.code, err.name) == (code, name)
    rpc = to_jsonrpc(exc)
    assert rpc.code == code and rpc.data["code"] == name


def test_a_bug_reveals_nothing_but_an_incident(caplog: pytest.LogCaptureFixture) -> None:
    try:
        open("/definitely/not/here/secret.txt")  # noqa: SIM115
    except OSError as exc:
        with caplog.at_level(logging.ERROR, logger="kgent.daemon"):
            rpc = to_jsonrpc(exc)
    assert rpc.code == -32603
    assert set(rpc.data) == {"code", "incident"} and rpc.data["code"] == "internal_error"
    assert "secret" not in rpc.message and "/definitely" not in rpc.message
    assert rpc.data["incident"] in caplog.text and "Traceback" in caplog.text
