"""The vendored rendering libraries (server/kgent/http/static/vendor/) are the files editors/web/vendor.py copied from
the packages its lock file pins: each file's package, version and integrity are the lock file's, its bytes are the
sha256 the manifest recorded, every package's licence ships beside it, and the page imports nothing else."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "server" / "kgent" / "http" / "static" / "vendor"
LOCK = ROOT / "editors" / "web" / "package-lock.json"
PACKAGE = ROOT / "editors" / "web" / "package.json"


def manifest() -> list[dict[str, str]]:
    rows: list[dict[str, str]] = json.loads((VENDOR / "MANIFEST.json").read_text())
    return rows


def test_each_vendored_file_is_the_locked_package_s_file() -> None:
    locked = json.loads(LOCK.read_text())["packages"]
    pinned = json.loads(PACKAGE.read_text())["dependencies"]
    rows = manifest()
    assert {r["package"] for r in rows} == set(pinned)
    for row in rows:
        lock = locked[f"node_modules/{row['package']}"]
        assert row["version"] == lock["version"] == pinned[row["package"]], row
        assert row["integrity"] == lock["integrity"], row
        assert hashlib.sha256((VENDOR / row["file"]).read_bytes()).hexdigest() == row["sha256"], row["file"]
    assert {p.name for p in VENDOR.iterdir()} == {r["file"] for r in rows} | {"MANIFEST.json"}


def test_every_package_ships_its_licence() -> None:
    for package in {r["package"] for r in manifest()}:
        licences = [r for r in manifest() if r["package"] == package and r["source"] == "LICENSE"]
        assert len(licences) == 1, package
        assert (VENDOR / licences[0]["file"]).stat().st_size > 500


def test_the_page_loads_only_its_own_and_the_vendored_files() -> None:
    static = VENDOR.parent
    for script in static.glob("*.js"):
        for spec in re.findall(r'^import [^;]* from "([^"]+)";$', script.read_text(), re.M):
            assert spec.startswith("./"), (script.name, spec)
            assert (static / spec).is_file(), (script.name, spec)
    html = (static / "index.html").read_text()
    assert "<script>" not in html and "style=" not in html and "<style" not in html  # CSP: nothing inline
    for ref in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert ref.startswith("/static/"), ref
