"""The ACP client's `fs/read_text_file` / `fs/write_text_file` as a TextFileHost, so the shared HostFileOps
(kgent.service.hostfiles: timeouts, fallbacks to disk, notes) serves the tools' FileOps over ACP too: reads see
unsaved buffers and edits land in the editor's buffers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from acp import Client, RequestError

from kgent.service.hostfiles import HostFileError, HostFileOps


class ClientTextFiles:
    """One session's text files through the ACP client (which serves open buffers and the disk alike)."""

    writes_save = True  # ACP clients write the file: shell commands are not warned of unsaved buffers

    def __init__(self, client: Client, session_id: str) -> None:
        self.client = client
        self.session_id = session_id

    async def read_text(self, path: Path) -> str | None:
        try:
            response = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        except RequestError as exc:
            raise HostFileError(str(exc)) from None
        return response.content

    async def write_text(self, path: Path, content: str) -> bool:
        try:
            await self.client.write_text_file(session_id=self.session_id, path=str(path), content=content)
        except RequestError as exc:
            raise HostFileError(str(exc)) from None
        return True

    async def save(self, paths: Sequence[Path]) -> list[Path]:
        return []  # ACP has no save request: the client's fs/write_text_file decides what a write means


def client_file_ops(client: Client, session_id: str, *, read: bool, write: bool) -> HostFileOps:
    """FileOps for one ACP session: text through the client, as it advertised in `initialize`; the rest local.
    A write the client takes counts as saved (ACP clients write the file), so shell commands are not warned."""
    return HostFileOps(ClientTextFiles(client, session_id), read=read, write=write, unsaved_writes=False)
