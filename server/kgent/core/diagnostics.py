"""Diagnostics: what a language server (the editor's, or one Kgent runs) says about a file, in Kgent's words.

`Diagnostic` is one finding; `DiagnosticSource` is where they come from (the host, or Kgent's LSP client)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

Severity = Literal["error", "warning", "information", "hint"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "information", "hint")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding in one file: `line` and `column` 1-based; `path` relative to the workspace when inside it."""

    path: str
    line: int
    column: int
    severity: Severity
    message: str
    source: str | None = None
    code: str | None = None

    def identity(self) -> tuple[str, str, str | None, str | None]:
        """What makes two findings the same one, wherever an edit moved it."""
        return (self.severity, self.message, self.source, self.code)

    def describe(self) -> str:
        """`app.py:3:5: error F821 Undefined name `x` (ruff)` — one line for the model and for people."""
        message = " — ".join(line.strip() for line in self.message.splitlines() if line.strip())
        code = f" {self.code}" if self.code else ""
        source = f" ({self.source})" if self.source else ""
        return f"{self.path}:{self.line}:{self.column}: {self.severity}{code} {message}{source}"

    def to_dict(self) -> dict[str, Any]:
        """The wire form (protocol.md § Diagnostics): optional fields omitted when empty."""
        out: dict[str, Any] = {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "severity": self.severity,
            "message": self.message,
        }
        if self.source:
            out["source"] = self.source
        if self.code:
            out["code"] = self.code
        return out


def diagnostic_from_dict(path: str, raw: Mapping[str, Any]) -> Diagnostic:
    """A host's answer (protocol.md § agent/diagnostics) as a Diagnostic; ValueError for one of another shape."""
    line, column, severity, message = (raw.get(k) for k in ("line", "column", "severity", "message"))
    if not isinstance(line, int) or not isinstance(column, int) or line < 1 or column < 1:
        raise ValueError("a diagnostic needs 'line' and 'column' (integers from 1)")
    if severity not in SEVERITIES or not isinstance(message, str):
        raise ValueError(f"a diagnostic needs 'severity' (one of {', '.join(SEVERITIES)}) and 'message'")
    source, code = raw.get("source"), raw.get("code")
    return Diagnostic(
        path,
        line,
        column,
        severity,
        message,
        source if isinstance(source, str) and source else None,
        str(code) if isinstance(code, str | int) and not isinstance(code, bool) and code != "" else None,
    )


class DiagnosticSource(Protocol):
    """Where a run's diagnostics come from. `collect` may take as long as it likes: the caller bounds the wait."""

    name: str  # for people: "the editor", "language servers"
    needs_text: (
        bool  # collect wants the file's text (a language server Kgent runs); False: it reads it itself
    )

    def take_notes(self) -> list[str]:
        """What went wrong since the last call (a server that did not answer in time …), each said once."""
        ...

    def handles(self, path: Path) -> bool:
        """Whether this source has anything to say about files like `path` (its language servers' file types)."""
        ...

    async def collect(self, path: Path, text: str | None) -> Sequence[Diagnostic] | None:
        """The file's diagnostics once its content is `text` (None: it was deleted, or the source reads it itself);
        None when the source has nothing for it after all. The caller fills in each answer's `path`."""
        ...
