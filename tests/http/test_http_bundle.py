"""The web client's shared page code (server/kgent/http/static/page.js) is the bundle editors/web/build.py built from
the sources in editors/web/src/ as they are now: the manifest's hash of the sources is today's, the bundle's bytes are
the ones it recorded; each rendering library is pinned once (editors/web's package.json = its lock = the manifest, and
the VS Code extension pins none of its own), its licence ships beside the bundle, and the page loads nothing else."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "server" / "kgent" / "http" / "static"
WEB = ROOT / "editors" / "web"
LIBRARIES = ("markdown-it", "dompurify", "highlight.js")


def manifest() -> dict[str, object]:
    data: dict[str, object] = json.loads((STATIC / "vendor" / "MANIFEST.json").read_text())
    return data


def build_module() -> object:
    spec = importlib.util.spec_from_file_location("kgent_web_build", WEB / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bundle_is_built_from_today_s_sources() -> None:
    bundle = manifest()["bundle"]
    assert isinstance(bundle, dict)
    sources = build_module().sources()  # type: ignore[attr-defined]
    assert bundle["sources"] == sources, "editors/web/src changed: run python editors/web/build.py"
    assert hashlib.sha256((STATIC / bundle["file"]).read_bytes()).hexdigest() == bundle["sha256"]


def test_each_library_is_pinned_once_and_ships_its_licence() -> None:
    locked = json.loads((WEB / "package-lock.json").read_text())["packages"]
    pinned = json.loads((WEB / "package.json").read_text())["dependencies"]
    rows = manifest()["libraries"]
    assert isinstance(rows, list)
    assert {r["package"] for r in rows} == set(pinned) == set(LIBRARIES)
    for row in rows:
        lock = locked[f"node_modules/{row['package']}"]
        assert row["version"] == lock["version"] == pinned[row["package"]], row
        assert row["integrity"] == lock["integrity"], row
        licence = STATIC / "vendor" / row["licence"]
        assert hashlib.sha256(licence.read_bytes()).hexdigest() == row["sha256"], row
        assert licence.stat().st_size > 500
    assert {p.name for p in (STATIC / "vendor").iterdir()} == {r["licence"] for r in rows} | {"MANIFEST.json"}
    # The VS Code webview bundles the same sources, so it takes the libraries from editors/web, never its own pin.
    vscode = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    assert not set(LIBRARIES) & (set(vscode.get("dependencies", {})) | set(vscode.get("devDependencies", {})))


def test_the_page_loads_only_its_own_files() -> None:
    for script in STATIC.glob("*.js"):
        for spec in re.findall(r'^import [^;]* from "([^"]+)";$', script.read_text(), re.M):
            assert spec.startswith("./"), (script.name, spec)
            assert (STATIC / spec).is_file(), (script.name, spec)
    html = (STATIC / "index.html").read_text()
    assert "<script>" not in html and "style=" not in html and "<style" not in html  # CSP: nothing inline
    for ref in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert ref.startswith("/static/"), ref
