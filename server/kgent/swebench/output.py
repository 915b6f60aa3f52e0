# Concept: an evaluation's output directory — predictions, per-instance records, trajectories — written so that a
# kill at any instant leaves every file whole.
"""`OUT/predictions.jsonl` (what the harness reads), `OUT/summary.json` (one record per instance plus totals) and
`OUT/trajectories/<instance_id>.jsonl` (each run's session file).

Every write replaces a file by rename after fsync: predictions.jsonl is copied, the new line appended to the copy,
the copy renamed over the original. A reader (the harness, a resume, a merge) therefore sees each prediction line
whole or not at all, whenever the process dies. One process writes a directory at a time (`OUT/.lock`).

Files get the mode `--output-mode` names, by default what the umask gives a new file (0644 under the usual 022),
so a harness or a colleague running as another user can read them. `OUT/attempts.json` counts the attempts each
instance started, written before the attempt runs, so a kill -9 mid-run still counts.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kgent.core.errors import KgentError

PREDICTIONS = "predictions.jsonl"
SUMMARY = "summary.json"
ATTEMPTS = "attempts.json"
TRAJECTORIES = "trajectories"
PREDICTION_KEYS = ("instance_id", "model_name_or_path", "model_patch")


class OutputError(KgentError):
    code = "swebench_output"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_UMASK = os.umask(0)  # read once, at import (umask can only be read by setting it)
os.umask(_UMASK)


def default_mode() -> int:
    """The mode a new file gets from the umask (0o666 & ~umask)."""
    return 0o666 & ~_UMASK


def parse_mode(text: str) -> int:
    """An octal file mode such as 0644 or 640 (permission bits only)."""
    try:
        mode = int(text, 8)
    except ValueError:
        raise OutputError(f"--output-mode takes an octal mode such as 0644, got {text!r}") from None
    if not 0 <= mode <= 0o777:
        raise OutputError(f"--output-mode takes permission bits (0 to 0777), got {text!r}")
    return mode


def replace_file(path: Path, data: bytes, *, keep: Path | None = None, mode: int | None = None) -> None:
    """Make `path` hold `keep`'s bytes followed by `data`, atomically (temp file, fsync, rename, fsync dir), with
    `mode` (default: the umask's)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, default_mode() if mode is None else mode)
        with os.fdopen(fd, "wb") as out:
            if keep is not None and keep.exists():
                with open(keep, "rb") as src:
                    shutil.copyfileobj(src, out, 1 << 20)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def write_json(path: Path, obj: Any, *, mode: int | None = None) -> None:
    replace_file(path, (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), mode=mode)


def read_predictions(path: Path) -> list[dict[str, Any]]:
    """The predictions in a file (a missing file has none). A line that is not a whole JSON object with the three
    keys is an error naming the line: files written here never hold one."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    found: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise OutputError(f"{path}:{n} is not a whole JSON line") from None
        if not isinstance(record, dict) or any(
            not isinstance(record.get(k), str) for k in PREDICTION_KEYS[:2]
        ):
            raise OutputError(f"{path}:{n} is not a prediction ({', '.join(PREDICTION_KEYS)})")
        found.append(record)
    return found


def prediction_line(instance_id: str, model_name: str, patch: str) -> bytes:
    record = {"instance_id": instance_id, "model_name_or_path": model_name, "model_patch": patch}
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape")


@dataclass(slots=True)
class Summary:
    """summary.json: the run's settings, one record per instance (the latest attempt), and totals."""

    meta: dict[str, Any] = field(default_factory=dict)
    instances: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Summary:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except ValueError:
            raise OutputError(f"{path} is not valid JSON") from None
        meta = {k: v for k, v in data.items() if k not in ("instances", "totals")}
        return cls(meta=meta, instances=dict(data.get("instances") or {}))

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.meta,
            "totals": totals(self.instances),
            "instances": dict(sorted(self.instances.items())),
        }


def totals(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Counts by status and sums of turns, tokens, seconds and cost over the records."""
    by_status: dict[str, int] = {}
    tokens: dict[str, int] = {}
    turns, seconds, cost, cost_known = 0, 0.0, 0.0, True
    for rec in records.values():
        by_status[rec.get("status", "?")] = by_status.get(rec.get("status", "?"), 0) + 1
        turns += int(rec.get("turns") or 0)
        seconds += float(rec.get("seconds") or 0.0)
        for k, v in (rec.get("tokens") or {}).items():
            tokens[k] = tokens.get(k, 0) + int(v)
        if rec.get("cost") is None:
            cost_known = False
        else:
            cost += float(rec["cost"])
    return {
        "instances": len(records),
        "by_status": dict(sorted(by_status.items())),
        "with_patch": sum(1 for r in records.values() if r.get("patch_bytes")),
        "turns": turns,
        "tokens": tokens,
        "seconds": round(seconds, 3),
        "cost": round(cost, 6) if cost_known else None,
    }


class OutputDir:
    """One evaluation's output directory, held by this process while open (`with OutputDir(path) as out`)."""

    def __init__(self, root: Path, *, mode: int | None = None) -> None:
        self.root = root
        self.mode = default_mode() if mode is None else mode  # of every file written here
        self.predictions_path = root / PREDICTIONS
        self.summary_path = root / SUMMARY
        self.attempts_path = root / ATTEMPTS
        self.attempts: dict[str, int] = {}
        self.trajectories = root / TRAJECTORIES
        self._lock_fd: int | None = None
        self.summary = Summary()
        self.done: dict[str, dict[str, Any]] = {}  # instance_id → its prediction

    def __enter__(self) -> OutputDir:
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputError(f"another kgent swebench process is writing {self.root}") from None
        self._lock_fd = fd
        for stale in self.root.glob(".*.tmp"):  # a kill between mkstemp and rename
            stale.unlink(missing_ok=True)
        self.trajectories.mkdir(exist_ok=True)
        self.summary = Summary.load(self.summary_path)
        self.done = {p["instance_id"]: p for p in read_predictions(self.predictions_path)}
        try:
            counted = json.loads(self.attempts_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            counted = {}
        except ValueError:
            raise OutputError(f"{self.attempts_path} is not valid JSON") from None
        self.attempts = {str(k): int(v) for k, v in dict(counted).items()}
        return self

    def __exit__(self, *exc: object) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    def trajectory_path(self, instance_id: str) -> Path:
        return self.trajectories / f"{instance_id}.jsonl"

    def start_attempt(self, instance_id: str) -> int:
        """Count one more attempt of the instance, on disk before it runs; returns its number (1 for the first).
        Counts what an earlier summary record says too (an output directory from before attempts.json)."""
        earlier = int((self.summary.instances.get(instance_id) or {}).get("attempt") or 0)
        n = max(self.attempts.get(instance_id, 0), earlier) + 1
        self.attempts[instance_id] = n
        write_json(self.attempts_path, dict(sorted(self.attempts.items())), mode=self.mode)
        return n

    def keep_trajectory(self, src: Path, instance_id: str) -> None:
        """Move a finished session file in as the instance's trajectory, with the directory's file mode."""
        dst = self.trajectory_path(instance_id)
        os.chmod(src, self.mode)
        src.replace(dst)

    def record(
        self, instance_id: str, record: dict[str, Any], *, meta: Mapping[str, Any] | None = None
    ) -> None:
        """Store an instance's record in summary.json (before its prediction: predictions.jsonl is what counts
        as done, so a kill between the two re-runs the instance and overwrites this record)."""
        if meta is not None:
            self.summary.meta.update(meta)
        self.summary.instances[instance_id] = record
        self.summary.meta["updated"] = now_iso()
        write_json(self.summary_path, self.summary.to_dict(), mode=self.mode)

    def write_meta(self, meta: Mapping[str, Any]) -> None:
        self.summary.meta.update(meta)
        write_json(self.summary_path, self.summary.to_dict(), mode=self.mode)

    def add_prediction(self, instance_id: str, model_name: str, patch: str) -> None:
        """Append one prediction line, atomically (see the module docstring)."""
        if instance_id in self.done:
            raise OutputError(f"{instance_id} already has a prediction in {self.predictions_path}")
        replace_file(
            self.predictions_path,
            prediction_line(instance_id, model_name, patch),
            keep=self.predictions_path,
            mode=self.mode,
        )
        self.done[instance_id] = {
            "instance_id": instance_id,
            "model_name_or_path": model_name,
            "model_patch": patch,
        }


@contextlib.contextmanager
def opened(root: Path) -> Iterator[OutputDir]:
    with OutputDir(root) as out:
        yield out
