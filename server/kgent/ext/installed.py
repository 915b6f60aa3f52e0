"""The installed extensions' entry points (group `kgent.extensions`), remembered between processes (issue 37).

Finding them is `importlib.metadata.entry_points`: importing it (email, zipfile, csv…) and reading every installed
distribution's metadata takes ~40 ms in a bare interpreter, ~12 ms of CPU of every `kgent run` (which has loaded part
of that already) and of the daemon's path to its `initialize` answer, to find what is nearly always nothing. What it finds depends only on the distributions in the directories of `sys.path`, and
installing, upgrading or removing one adds or removes an entry in its directory, which moves that directory's
modification time. So the answer is kept by those directories and their times
(`<kgent>/__pycache__/codecache-entrypoints.<tag>.bin`, beside the methods' cache of kgent.core.codecache, under the
same rules): a process whose `sys.path` and directories are as they were reads the answer back and imports nothing;
any change, or a file that cannot be read, scans again. `kgent extensions` always scans (editing an installed
package's entry_points.txt by hand moves no directory's time).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgent.core.codecache import cache_path

GROUP = "kgent.extensions"
_KEEP = 8  # sys.path layouts remembered (a venv's own, one made beneath it, PYTHONPATH added…)


@dataclass(frozen=True, slots=True)
class Installed:
    """One entry point: its name, `module:attr`, and its distribution's version."""

    name: str
    value: str
    version: str

    def load(self) -> Any:
        """What the entry point names, loaded as importlib.metadata loads it."""
        import importlib.metadata

        return importlib.metadata.EntryPoint(self.name, self.value, GROUP).load()


def entry_points(*, rescan: bool = False) -> list[Installed]:
    """The installed extensions' entry points, by name; from the cache unless `sys.path` changed or `rescan`."""
    path = cache_path("entrypoints")
    key = _layout()
    remembered = {} if path is None else _read(path)
    if not rescan and key in remembered:
        return remembered[key]
    found = _scan()
    if path is not None and not sys.dont_write_bytecode:
        remembered.pop(key, None)
        remembered[key] = found
        _write(path, dict(list(remembered.items())[-_KEEP:]))
    return found


def _layout() -> str:
    """sys.path's directories and their modification times (a missing one as -1), as one digest."""
    seen = []
    for entry in sys.path:
        try:
            mtime = os.stat(entry or ".").st_mtime_ns
        except (OSError, ValueError):
            mtime = -1
        seen.append([entry, mtime])
    return hashlib.sha256(json.dumps([sys.version, GROUP, seen]).encode()).hexdigest()


def _scan() -> list[Installed]:
    import importlib.metadata

    found = [
        Installed(ep.name, ep.value, ep.dist.version if ep.dist is not None else "")
        for ep in importlib.metadata.entry_points(group=GROUP)
    ]
    return sorted(found, key=lambda e: e.name)


def _read(path: Path) -> dict[str, list[Installed]]:
    try:
        data = json.loads(path.read_bytes())
        return {
            key: [Installed(str(n), str(v), str(ver)) for n, v, ver in rows] for key, rows in data.items()
        }
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def _write(path: Path, remembered: dict[str, list[Installed]]) -> None:
    data = {key: [[e.name, e.value, e.version] for e in rows] for key, rows in remembered.items()}
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(data))
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
