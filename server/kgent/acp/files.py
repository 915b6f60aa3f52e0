"""ClientFileOps: the tools' file seam (kgent.tools.ops.FileOps) through the ACP client's `fs/read_text_file` and
`fs/write_text_file` where it offers them, so reads see unsaved buffers and edits land in the editor's buffers.
Everything else (stat, listing, removal, binary files) stays on the local disk."""

from __future__ import annotations

import logging
from pathlib import Path

from acp import Client, RequestError

from kgent.tools.ops import DirEntry, FileOps, FileStat, LocalFileOps

log = logging.getLogger("kgent.acp")


class ClientFileOps:
    """FileOps for one session: text through the client (as it advertised in `initialize`), the rest local."""

    def __init__(
        self, client: Client, session_id: str, *, read: bool, write: bool, local: FileOps | None = None
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.read = read
        self.write = write
        self.local: FileOps = local or LocalFileOps()

    async def read_bytes(self, path: Path) -> bytes:
        """The client's text of the file (its buffer if open); the disk's bytes for a binary file or on an error."""
        data = await self.local.read_bytes(path)  # missing → FileNotFoundError, as the tools expect
        if not self.read:
            return data
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:  # binary: the client's text API cannot carry it
            return data
        try:
            response = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        except RequestError as exc:
            log.debug("fs/read_text_file %s failed (%s); reading the disk", path, exc)
            return data
        return response.content.encode("utf-8", "surrogatepass")

    async def write_bytes_atomic(self, path: Path, data: bytes) -> None:
        """Text goes to the client (it writes or updates its buffer); bytes that are not UTF-8 go to the disk."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if not self.write or text is None:
            await self.local.write_bytes_atomic(path, data)
            return
        try:
            await self.client.write_text_file(session_id=self.session_id, path=str(path), content=text)
        except RequestError as exc:
            raise OSError(f"the editor refused to write {path}: {exc}") from None

    async def exists(self, path: Path) -> bool:
        return await self.local.exists(path)

    async def is_dir(self, path: Path) -> bool:
        return await self.local.is_dir(path)

    async def stat(self, path: Path) -> FileStat:
        return await self.local.stat(path)

    async def size(self, path: Path) -> int:
        return await self.local.size(path)

    async def list_dir(self, path: Path) -> list[DirEntry]:
        return await self.local.list_dir(path)

    async def remove(self, path: Path) -> None:
        await self.local.remove(path)
