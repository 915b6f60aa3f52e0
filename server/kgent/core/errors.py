"""Kgent's error tree. Errors inside a run are values (events, tool results); these are for the edges.

KgentError
├── ConfigError          bad or missing configuration (a key, a mode, a provider name)
├── ProviderError        a model call failed; `retryable` says whether trying again can help
├── SessionError         a session file or id is unusable
│   ├── SessionNotFound
│   └── SessionCorrupt   a line of the wrong shape or damaged before the end: where it is
├── RunStateError        an AgentRun was driven wrongly (second consumer, stale permission id)
└── ExtensionError       an extension's registration, tool, provider or hook failed (the message names it)
"""

from __future__ import annotations

from kgent.core.redact import redact


class KgentError(Exception):
    """Root of every error Kgent raises on purpose. `code` is a stable machine-readable name.

    The message is redacted on creation (kgent.core.redact): no configured key, credential field, bearer token or
    URL userinfo survives into events, logs or session entries built from it."""

    code = "kgent_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        message = redact(message)
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class ConfigError(KgentError):
    code = "config_error"


class ProviderError(KgentError):
    """A provider failure, classified where it entered (HTTP status, transport error)."""

    code = "provider_error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status


class SessionError(KgentError):
    code = "session_error"


class SessionNotFound(SessionError):
    code = "session_not_found"


class SessionCorrupt(SessionError):
    """A session file damaged before its last line, or holding a line of the wrong shape: `line` (1-based) and
    `offset` (bytes from the start of the file) say where."""

    code = "session_corrupt"

    def __init__(self, message: str, *, line: int | None = None, offset: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.offset = offset


class RunStateError(KgentError):
    code = "run_state_error"


class ExtensionError(KgentError):
    """An extension misbehaved; the message names the extension and what it was doing."""

    code = "extension_error"
