"""The client's open buffers as a TextFileHost: `agent/readTextFile`, `agent/writeTextFile` and `agent/saveFiles`
requests (daemon → client, protocol.md § Host-owned files). Timeouts and fallbacks are HostFileOps' (kgent.service):
a request it gives up on is withdrawn here with `$/cancelRequest`."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgent.service.hostfiles import HostFileError
from kgent.service.runs import Outbox

_ids = itertools.count(1)


class DaemonTextFiles:
    """One run's (or one review's) requests for the client's buffers."""

    def __init__(self, out: Outbox, run_id: str | None, session_id: str) -> None:
        self.out = out
        self.run_id = run_id
        self.session_id = session_id

    async def _ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        msg_id = f"fs-{next(_ids)}"
        ids = {"runId": self.run_id} if self.run_id is not None else {}
        future = self.out.request(method, {**ids, "sessionId": self.session_id, **params}, msg_id)
        try:
            answer = await future
        except asyncio.CancelledError:
            self.out.withdraw(msg_id)  # timed out or the run was cancelled: the client may stop working on it
            raise
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

    async def save(self, paths: Sequence[Path]) -> list[Path]:
        answer = await self._ask("agent/saveFiles", {"paths": [str(p) for p in paths]})
        saved = answer.get("saved")
        if not isinstance(saved, list) or not all(isinstance(p, str) for p in saved):
            raise HostFileError("agent/saveFiles answered without a 'saved' list of paths")
        return [Path(p) for p in saved]
