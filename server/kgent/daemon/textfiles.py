"""The client's open buffers as a TextFileHost: `agent/readTextFile`, `agent/writeTextFile` and `agent/saveFiles`
requests (daemon → client, protocol.md § Host-owned files), and its diagnostics (`agent/diagnostics`). Timeouts and fallbacks are HostFileOps' (kgent.service):
a request it gives up on is withdrawn with `$/cancelRequest` (DaemonPort.request)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from kgent.service.hostfiles import HostFileError
from kgent.service.runs import FileScope

_ids = itertools.count(1)


class Requests(Protocol):
    async def request(self, method: str, params: dict[str, Any], msg_id: str) -> Any: ...


class DaemonTextFiles:
    """One run's (or one review's) requests for the client's buffers."""

    writes_save = False  # a write lands in a buffer and stays unsaved until `agent/saveFiles`

    def __init__(self, out: Requests, scope: FileScope) -> None:
        self.out = out
        self.scope = scope

    async def _ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        scope = self.scope
        ids = {"runId": scope.run_id} if scope.run_id is not None else {}
        try:
            answer = await self.out.request(
                method, {**ids, "sessionId": scope.session_id, **params}, f"fs-{next(_ids)}"
            )
        except Exception as exc:  # an error reply
            raise HostFileError(f"{method} failed: {getattr(exc, 'message', None) or exc}") from None
        if not isinstance(answer, dict):
            raise HostFileError(f"{method} answered {type(answer).__name__}, not an object")
        return answer

    async def read_text(self, path: Path) -> str | None:
        answer = await self._ask("agent/readTextFile", {"path": str(path)})
        content = answer.get("content")
        if content is not None and not isinstance(content, str):
            raise HostFileError("agent/readTextFile answered a 'content' that is neither a string nor null")
        return content

    async def write_text(self, path: Path, content: str) -> bool:
        answer = await self._ask("agent/writeTextFile", {"path": str(path), "content": content})
        applied = answer.get("applied")
        if not isinstance(applied, bool):
            raise HostFileError("agent/writeTextFile answered without a boolean 'applied'")
        return applied

    async def diagnostics(self, path: Path) -> list[dict[str, Any]] | None:
        answer = await self._ask("agent/diagnostics", {"path": str(path)})
        found = answer.get("diagnostics")
        if found is not None and (not isinstance(found, list) or not all(isinstance(d, dict) for d in found)):
            raise HostFileError("agent/diagnostics answered a 'diagnostics' that is neither a list nor null")
        return found

    async def save(self, paths: Sequence[Path]) -> list[Path]:
        answer = await self._ask("agent/saveFiles", {"paths": [str(p) for p in paths]})
        saved = answer.get("saved")
        if not isinstance(saved, list) or not all(isinstance(p, str) for p in saved):
            raise HostFileError("agent/saveFiles answered without a 'saved' list of paths")
        return [Path(p) for p in saved]
