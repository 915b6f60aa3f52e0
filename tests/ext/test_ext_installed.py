"""The installed extensions' entry points are remembered between processes (kgent.ext.installed): a process whose
sys.path is as it was reads the answer back without importing importlib.metadata; a distribution installed into a
directory of sys.path is found by the next process; a damaged cache is scanned again. Each process is real, with its
own cache (PYTHONPYCACHEPREFIX: where the cache lives, as for .pyc files), and a directory of its own on sys.path
into which a distribution is "installed" as pip leaves one (a .dist-info with METADATA and entry_points.txt)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import kgent
from kgent.core.codecache import cache_path

# Prints what the index found and whether it had to scan (importlib.metadata imported).
FIND = """import json, sys
from kgent.ext.installed import entry_points
found = [[e.name, e.value, e.version] for e in entry_points()]
print(json.dumps({"found": found, "scanned": "importlib.metadata" in sys.modules}))
"""


def find(tmp_path: Path, site: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env.update(PYTHONPATH=str(site), PYTHONPYCACHEPREFIX=str(tmp_path / "pycache"))
    done = subprocess.run(
        [sys.executable, "-c", FIND], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def install(site: Path, name: str, version: str, entry: str) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[kgent.extensions]\n{entry}\n")


def test_the_answer_is_read_back_until_a_distribution_is_installed(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    assert find(tmp_path, site) == {"found": [], "scanned": True}
    assert find(tmp_path, site) == {"found": [], "scanned": False}

    install(site, "kgent_fake", "1.2", "fake = kgent_fake:register")
    fake = ["fake", "kgent_fake:register", "1.2"]
    assert find(tmp_path, site) == {"found": [fake], "scanned": True}
    assert find(tmp_path, site) == {"found": [fake], "scanned": False}

    install(site, "kgent_other", "0.1", "another = kgent_other.ext:setup")
    other = ["another", "kgent_other.ext:setup", "0.1"]
    assert find(tmp_path, site) == {"found": [other, fake], "scanned": True}  # by name


def test_a_damaged_or_foreign_cache_is_scanned_again(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    install(site, "kgent_fake", "1.2", "fake = kgent_fake:register")
    assert find(tmp_path, site)["scanned"] is True
    beside_bytecode = cache_path("entrypoints")  # this process's; the others' under their PYTHONPYCACHEPREFIX
    assert beside_bytecode is not None
    package = Path(kgent.__file__).resolve().parent
    cache = tmp_path / "pycache" / str(package).lstrip(os.sep) / beside_bytecode.name
    assert cache.is_file()
    for damaged in (b"{not json", b'{"x": [[1, 2]]}', b"[]", b"\xff\xfe"):
        cache.write_bytes(damaged)
        assert find(tmp_path, site) == {"found": [["fake", "kgent_fake:register", "1.2"]], "scanned": True}
