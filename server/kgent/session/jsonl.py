"""JsonlSessionStore: the durable SessionStore, one append-only JSONL file per session.

Files live at `root/<workspace-key>/<id>.jsonl` (format: docs/session-format.md). Each `append` is one `write` of
whole lines followed by `fsync`, so a kill can tear at most the last line; loading drops such a line with a warning
and the next append cuts it off before writing. File I/O runs in worker threads; writes to one session are serialized.
A process that serves one run (`kgent run`) may write on the event loop's own thread instead (`on_loop`), as long as
the disk is fast: the first write slower than `SLOW_WRITE` hands every later one to worker threads again.

A writer holds an exclusive flock on the file while it writes — and, between writes, for as long as the session is
`hold`-ed (the kernel holds it for a run's lifetime). A second process that tries to write gets SessionError
`session_busy` naming the holder, instead of silently forking the session.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import fcntl
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from kgent.core.errors import SessionCorrupt, SessionError, SessionNotFound
from kgent.session import codec, repair
from kgent.session.blobs import blob_dir, check_sha256, delete_blobs, output_dir, read_blob, write_blob
from kgent.session.entries import (
    TITLE,
    SessionEntry,
    SessionInfo,
    SessionTree,
    check_batch,
    check_session_id,
    derived_and_named,
    label_entry,
    new_id,
    now_iso,
)
from kgent.session.index import forget, list_sessions
from kgent.session.paths import normalize_workspace, workspace_key
from kgent.session.repair import RepairReport

log = logging.getLogger("kgent.session")
T = TypeVar("T")
# Where sessions were found, remembered for the newest this many (a long-lived daemon creates sessions without end;
# one that was forgotten is found again by a scan of the store's directories).
MAX_KNOWN_PATHS = 4096
# A write (with its fsync) on the event loop's thread that takes longer than this sends the later ones to worker
# threads: a disk busy enough to be this slow would hold the loop, and everything it serves, for as long.
SLOW_WRITE = 0.05


@dataclass(slots=True, eq=False)
class _Handle:
    """What the store knows about one session file it writes to (enough to validate appends without re-reading)."""

    session_id: str
    path: Path
    workspace: str
    created: str
    ids: set[str]
    leaf_id: str | None
    title: str
    updated: str
    end: int  # offset just past the last good line
    size: int  # the file's size when last seen; end < size means torn bytes to cut before writing
    ino: int
    fd: int | None = None
    named: str = ""  # the title a person gave it (a `title` entry), over `title` (derived) when not ''
    closed: bool = False
    locked: bool = False  # this handle's fd holds the file's flock
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_parsed(cls, sid: str, path: Path, parsed: codec.Parsed, size: int, ino: int) -> _Handle:
        h = cls(sid, path, "", "", set(), None, "", "", 0, 0, ino)
        h.reset(parsed, size, ino)
        return h

    def reset(self, parsed: codec.Parsed, size: int, ino: int) -> None:
        self.workspace = str(parsed.header.get("workspace", ""))
        self.created = str(parsed.header.get("created", ""))
        self.ids = set(parsed.entries)
        self.leaf_id = parsed.leaf_id
        self.title, self.named = parsed.derived_title, parsed.named_title
        self.updated = parsed.updated
        self.end, self.size, self.ino = parsed.end, size, ino

    def info(self) -> SessionInfo:
        return SessionInfo(
            id=self.session_id,
            workspace=self.workspace,
            created=self.created,
            updated=self.updated or self.created,
            title=self.named or self.title,
            entry_count=len(self.ids),
            leaf_id=self.leaf_id,
        )

    def open_fd(self) -> int:
        if self.fd is None:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            self.locked = False
        return self.fd

    def flock(self) -> None:
        """Take the file's exclusive lock (once); SessionError `session_busy` if another writer has it."""
        fd = self.open_fd()
        if self.locked:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SessionError(
                f"session {self.session_id} is being written by another process ({lock_holder(self.path)}): "
                "wait for its run to end, or cancel it",
                code="session_busy",
            ) from None
        self.locked = True

    def unlock(self) -> None:
        if self.fd is not None and self.locked:
            with contextlib.suppress(OSError):
                fcntl.flock(self.fd, fcntl.LOCK_UN)
        self.locked = False

    def close(self) -> None:
        self.closed = True
        self.locked = False
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


class JsonlSessionStore:
    """Sessions as JSONL files under `root` (see `kgent.session.paths.sessions_root()`).

    At most `max_open` files stay open for appending; the least recently used one is closed past that.

    `on_loop`: write on the event loop's thread while writes are fast. A hand-off to a worker thread and back costs
    ~90 µs of CPU on a small virtual machine, more than the write and its fsync on a fast disk (~20 µs), twice a
    model call; it keeps a slow disk from holding the loop, which matters where one loop serves many sessions (the
    daemon, HTTP, ACP), and not in a process that serves one run, whose next step waits for the write anyway.
    """

    def __init__(self, root: str | os.PathLike[str], *, max_open: int = 32, on_loop: bool = False) -> None:
        self.root = Path(root)
        self.max_open = max(1, max_open)
        self.on_loop = on_loop
        self._handles: OrderedDict[str, _Handle] = OrderedDict()
        self._paths: OrderedDict[str, Path] = OrderedDict()
        self._held: set[str] = set()  # sessions whose flock stays taken between writes
        self._lock = threading.Lock()  # guards the maps and the set, never held during I/O

    async def _durably(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a write on the loop's thread (`on_loop`, while writes are fast) or in a worker thread; either way it
        is on disk, or refused, when this returns, and a cancellation never leaves it in flight."""
        if not self.on_loop:
            return await _in_a_thread(fn, *args)
        started = time.monotonic()
        try:
            return fn(*args)
        finally:
            took = time.monotonic() - started
            if took > SLOW_WRITE:
                self.on_loop = False
                log.info("a session write took %.0f ms: later ones run in worker threads", took * 1000)

    # -- the SessionStore contract -----------------------------------------------------------------------------
    async def create(self, *, workspace: str, session_id: str | None = None) -> SessionInfo:
        return await self._durably(self._create, workspace, session_id)

    async def load(self, session_id: str) -> SessionTree:
        return await asyncio.to_thread(self._load, session_id)

    async def append(self, session_id: str, entries: Sequence[SessionEntry]) -> None:
        if entries:
            await self._durably(self._append, session_id, tuple(entries))

    async def set_leaf(self, session_id: str, entry_id: str | None) -> None:
        await self._durably(self._set_leaf, session_id, entry_id)

    async def label(self, session_id: str, entry_id: str, label: str | None) -> SessionEntry:
        """Append a `label` entry naming `entry_id` (None clears it); returns the entry."""
        return await self._durably(self._label, session_id, entry_id, label)

    async def list(self, workspace: str) -> list[SessionInfo]:
        return await asyncio.to_thread(self._list, workspace)

    async def delete(self, session_id: str) -> None:
        """Remove the session's file (and a repair's `.damaged` copy) and its index row; SessionNotFound if there is
        none, SessionError `session_busy` if another process is writing it."""
        await self._durably(self._delete, session_id)

    async def put_blob(self, session_id: str, data: bytes) -> str:
        """Store bytes an entry will refer to (once per sha256, beside the session file); their sha256."""
        path = self.locate(check_session_id(session_id))
        return await self._durably(write_blob, blob_dir(path), data)

    async def get_blob(self, session_id: str, sha256: str) -> bytes:
        """Bytes stored with `put_blob`; SessionError `blob_missing` if they are gone."""
        path = self.locate(check_session_id(session_id))
        return await asyncio.to_thread(read_blob, blob_dir(path), check_sha256(sha256), session_id)

    def output_dir(self, session_id: str) -> Path:
        """Where the session's commands save their full output (`<id>.outputs/` beside its file, created on first use;
        deleted with the session). SessionNotFound if there is no session."""
        return output_dir(self.locate(session_id))

    async def aclose(self) -> None:
        """Close the files kept open for appending (the store stays usable: they reopen on demand)."""
        with self._lock:
            handles = list(self._handles.values())
            self._handles.clear()
        for h in handles:
            with h.lock:
                h.close()

    def hold(self, session_id: str) -> None:
        """Keep the session's file locked between writes (a run is live on it here) until `release`."""
        with self._lock:
            self._held.add(session_id)

    def release(self, session_id: str) -> None:
        """Stop holding the session: its lock is dropped now, or by the write in progress when it ends."""
        with self._lock:
            self._held.discard(session_id)
            h = self._handles.get(session_id)
        if h is not None and h.lock.acquire(blocking=False):
            try:
                h.unlock()
            finally:
                h.lock.release()

    async def repair(self, session_id: str) -> RepairReport:
        """Rewrite a damaged session keeping every valid entry (see kgent.session.repair); the original is kept
        beside it as `<id>.jsonl.damaged`. SessionError `session_busy` if another process is writing it."""
        return await self._durably(self._repair, session_id)

    def locate(self, session_id: str) -> Path:
        """The file of `session_id`, whatever its workspace; SessionNotFound if there is none."""
        sid = check_session_id(session_id)
        path = self._find(sid)
        if path is None:
            raise SessionNotFound(f"no session {sid!r} (`kgent sessions` lists them)")
        return path

    # -- implementation (worker threads) -----------------------------------------------------------------------
    def _find(self, sid: str) -> Path | None:
        with self._lock:
            known = self._paths.get(sid)
        if known is not None and known.is_file():
            return known
        try:
            dirs = [d for d in self.root.iterdir() if d.is_dir()]
        except FileNotFoundError:
            return None
        for d in dirs:
            path = d / f"{sid}.jsonl"
            if path.is_file():
                with self._lock:
                    self._know(sid, path)
                return path
        return None

    def _create(self, workspace: str, session_id: str | None) -> SessionInfo:
        sid = check_session_id(session_id or new_id())
        ws = normalize_workspace(workspace)
        if self._find(sid) is not None:
            raise SessionError(f"session {sid} already exists", code="session_exists")
        directory = self.root / workspace_key(ws)
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = directory / f"{sid}.jsonl"
        created = now_iso()
        data = codec.encode(codec.header(sid, ws, created))
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        except FileExistsError:
            raise SessionError(f"session {sid} already exists", code="session_exists") from None
        try:
            _write_all(fd, data)
            os.fsync(fd)
            _fsync_dir(directory)
        except OSError as exc:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise SessionError(
                f"could not create session {sid}: {exc.strerror}", code="session_write_failed"
            ) from None
        h = _Handle(
            sid, path, ws, created, set(), None, "", created, len(data), len(data), os.fstat(fd).st_ino, fd
        )
        self._adopt(h)
        return h.info()

    def _load(self, session_id: str) -> SessionTree:
        sid = check_session_id(session_id)
        path = self.locate(sid)
        with self._lock:
            writing = self._handles.get(sid)
        # Not while this store writes to it: a read in the middle of an append would see a torn line that is not.
        with writing.lock if writing is not None else contextlib.nullcontext(), path.open("rb") as f:
            ino = os.fstat(f.fileno()).st_ino
            data = f.read()
        parsed = _parse(sid, path, data)
        for warning in parsed.warnings:
            log.warning(warning)
        with self._lock:
            seeded = sid in self._handles
        if not seeded:  # the next append needs no second parse
            self._adopt(_Handle.from_parsed(sid, path, parsed, len(data), ino))
        info = SessionInfo(
            id=sid,
            workspace=str(parsed.header.get("workspace", "")),
            created=str(parsed.header.get("created", "")),
            updated=parsed.updated,
            title=parsed.title,
            entry_count=len(parsed.entries),
            leaf_id=parsed.leaf_id,
        )
        return SessionTree(
            info=info, entries=parsed.entries, leaf_id=parsed.leaf_id, warnings=parsed.warnings
        )

    def _append(self, sid: str, entries: Sequence[SessionEntry]) -> None:
        with self._locked(sid) as h:
            check_batch(h.ids, entries)
            self._write(h, b"".join(codec.encode(e.to_dict()) for e in entries))
            h.ids.update(e.id for e in entries)
            h.leaf_id, h.updated = entries[-1].id, entries[-1].timestamp
            derived, named = derived_and_named(entries)
            h.title = h.title or derived
            if any(e.type == TITLE for e in entries):
                h.named = named

    def _set_leaf(self, sid: str, entry_id: str | None) -> None:
        with self._locked(sid) as h:
            if entry_id is not None and entry_id not in h.ids:
                raise SessionError(f"no entry {entry_id!r} in session {sid}", code="entry_not_found")
            stamp = now_iso()
            self._write(h, codec.encode(codec.leaf_record(entry_id, stamp)))
            h.leaf_id, h.updated = entry_id, stamp

    def _label(self, sid: str, entry_id: str, label: str | None) -> SessionEntry:
        with self._locked(sid) as h:
            if entry_id not in h.ids:
                raise SessionError(f"no entry {entry_id!r} in session {sid}", code="entry_not_found")
            entry = label_entry(h.leaf_id, entry_id, label)
            self._write(h, codec.encode(entry.to_dict()))
            h.ids.add(entry.id)
            h.leaf_id, h.updated = entry.id, entry.timestamp
            return entry

    def _delete(self, session_id: str) -> None:
        sid = check_session_id(session_id)
        with self._locked(sid) as h:
            h.path.unlink()
            h.path.with_name(h.path.name + ".damaged").unlink(missing_ok=True)
            delete_blobs(h.path)
            _fsync_dir(h.path.parent)
            h.close()
            with self._lock:
                if self._handles.get(sid) is h:
                    del self._handles[sid]
                self._paths.pop(sid, None)
                self._held.discard(sid)
        forget(h.path.parent, sid)

    def _list(self, workspace: str) -> builtins.list[SessionInfo]:
        ws = normalize_workspace(workspace)
        directory = self.root / workspace_key(ws)
        if not directory.is_dir():
            return []
        return list_sessions(directory, ws)

    def _know(self, sid: str, path: Path) -> None:
        """Remember where a session lives (under self._lock), forgetting the oldest beyond MAX_KNOWN_PATHS."""
        self._paths[sid] = path
        self._paths.move_to_end(sid)
        while len(self._paths) > MAX_KNOWN_PATHS:
            self._paths.popitem(last=False)

    # -- handles -----------------------------------------------------------------------------------------------
    def _adopt(self, h: _Handle) -> _Handle:
        with self._lock:
            existing = self._handles.get(h.session_id)
            if existing is not None and not existing.closed:
                if h.fd is not None and h.fd != existing.fd:
                    os.close(h.fd)
                return existing
            self._handles[h.session_id] = h
            self._know(h.session_id, h.path)
            victims = []
            for other in list(self._handles.values()):
                if len(self._handles) <= self.max_open:
                    break
                if other is not h and other.lock.acquire(blocking=False):
                    victims.append(other)
                    del self._handles[other.session_id]
        for victim in victims:
            victim.close()
            victim.lock.release()
        return h

    def _handle(self, sid: str) -> _Handle:
        with self._lock:
            h = self._handles.get(sid)
            if h is not None:
                self._handles.move_to_end(sid)
                return h
        path = self.locate(sid)
        with path.open("rb") as f:
            ino = os.fstat(f.fileno()).st_ino
            data = f.read()
        return self._adopt(_Handle.from_parsed(sid, path, _parse(sid, path, data), len(data), ino))

    @contextlib.contextmanager
    def _locked(self, session_id: str) -> Iterator[_Handle]:
        """The session's handle: its thread lock and the file's flock taken, in step with the file (another process
        may have appended, or a repair replaced it)."""
        sid = check_session_id(session_id)
        while True:
            h = self._handle(sid)
            h.lock.acquire()
            if not h.closed:
                break
            h.lock.release()
        try:
            h.flock()
            self._sync(h)
            yield h
        finally:
            with self._lock:
                held = sid in self._held
            if not held:
                h.unlock()
            h.lock.release()

    def _sync(self, h: _Handle) -> None:
        try:
            st = os.stat(h.path)
        except FileNotFoundError:
            h.close()
            with self._lock:
                self._handles.pop(h.session_id, None)
                self._paths.pop(h.session_id, None)
            raise SessionNotFound(f"no session {h.session_id!r}") from None
        if h.fd is not None and os.fstat(h.fd).st_ino != st.st_ino:  # replaced (repaired): lock the new file
            h.unlock()
            os.close(h.fd)
            h.fd = None
            h.flock()
        if st.st_size != h.size or st.st_ino != h.ino:
            data = h.path.read_bytes()
            h.reset(_parse(h.session_id, h.path, data), len(data), st.st_ino)
        if h.end < h.size:  # a torn last line: cut it off so the next line does not glue onto it
            log.warning("session %s: cutting %d torn bytes off the end", h.session_id, h.size - h.end)
            os.truncate(h.path, h.end)
            h.size = h.end

    def _repair(self, session_id: str) -> RepairReport:
        sid = check_session_id(session_id)
        path = self.locate(sid)
        with self._lock:
            h = self._handles.get(sid)
        with h.lock if h is not None else contextlib.nullcontext():
            fd = os.open(path, os.O_RDONLY)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    if h is None or not h.locked:
                        raise SessionError(
                            f"session {sid} is being written by another process ({lock_holder(path)}): "
                            "repair it when that run has ended",
                            code="session_busy",
                        ) from None
                data = path.read_bytes()
                fixed, report = repair.repair(data, sid, path)
                if report.changed:
                    backup = path.with_name(path.name + ".damaged")
                    _write_new(backup, data)
                    tmp = path.with_name(path.name + ".repairing")
                    _write_new(tmp, fixed)
                    os.replace(tmp, path)
                    report.backup = str(backup)
            finally:
                os.close(fd)
            if h is not None:
                h.close()
                with self._lock:
                    if self._handles.get(sid) is h:
                        del self._handles[sid]
        return report

    def _write(self, h: _Handle, data: bytes) -> None:
        fd = h.open_fd()
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, h.end)
            raise SessionError(
                f"could not write session {h.session_id}: {exc.strerror}", code="session_write_failed"
            ) from None
        h.end = h.size = h.end + len(data)


def _parse(sid: str, path: Path, data: bytes) -> codec.Parsed:
    """Parse a session file; a damaged one is refused with where it is and what to do about it."""
    try:
        return codec.parse(data, f"session {sid} ({path})")
    except SessionCorrupt as exc:
        hint = f"; `kgent sessions repair {sid}` keeps every valid entry" if exc.line != 1 else ""
        raise SessionCorrupt(exc.message + hint, line=exc.line, offset=exc.offset) from None


async def _in_a_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run a write in a worker thread; a cancellation waits for it to finish (it is short) before propagating, so
    when the coroutine ends the batch is on disk or was refused, never still in flight behind the next write."""
    task = asyncio.ensure_future(asyncio.to_thread(fn, *args))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task])
        raise


def _write_new(path: Path, data: bytes) -> None:
    """Write a whole new 0600 file durably (replacing any file of that name)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def lock_holder(path: Path) -> str:
    """Who holds the flock on `path`, from /proc/locks: `pid N: <command line>` (or "another process")."""
    try:
        st = os.stat(path)
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return "another process"
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5].rsplit(":", 1)[-1] == str(st.st_ino):
            pid = fields[4]
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
            except OSError:
                argv = []
            command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(argv[:6]))
            return f"pid {pid}: {command}" if command else f"pid {pid}"
    return "another process"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_dir(directory: Path) -> None:
    """Make a new file's directory entry durable (not every platform can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
