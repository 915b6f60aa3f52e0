"""HostDiagnostics: a run's diagnostics after edits from the editor (`agent/diagnostics`, protocol.md § Diagnostics),
as a DiagnosticSource for the kernel. An editor that does not answer within `timeout`, or answers badly, costs that
once: a note says so (in the tool's result) and it is not asked again during the run."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from kgent.core.diagnostics import Diagnostic, diagnostic_from_dict
from kgent.service.hostfiles import HostFileError

log = logging.getLogger("kgent.service")


@runtime_checkable
class DiagnosticsHost(Protocol):
    """The editor's side: its language servers' findings for one file (raises HostFileError on a failed request)."""

    async def diagnostics(self, path: Path) -> Sequence[dict[str, Any]] | None: ...


class HostDiagnostics:
    """The editor as one run's source of diagnostics."""

    name = "the editor"
    needs_text = False  # the editor has the file (its buffer, or the disk it reads)

    def __init__(self, host: DiagnosticsHost, timeout: float) -> None:
        self.host = host
        self.timeout = timeout
        self.asking = True
        self._notes: list[str] = []

    def handles(self, path: Path) -> bool:
        return self.asking

    def take_notes(self) -> list[str]:
        notes, self._notes = self._notes, []
        return notes

    async def collect(self, path: Path, text: str | None) -> list[Diagnostic] | None:
        if not self.asking:
            return None
        try:
            answer = await asyncio.wait_for(self.host.diagnostics(path), self.timeout)
            if answer is None:
                return None
            return [diagnostic_from_dict("", d) for d in answer]
        except TimeoutError:
            reason = f"did not answer agent/diagnostics within {self.timeout:g} s"
        except HostFileError as exc:
            reason = f"could not give diagnostics ({exc})"
        except (ValueError, TypeError, AttributeError) as exc:
            reason = f"answered agent/diagnostics with something else than diagnostics ({exc})"
        self.asking = False
        note = f"the editor {reason}; no diagnostics for the rest of this run"
        log.info("host diagnostics: %s", note)
        self._notes.append(note)
        return None
