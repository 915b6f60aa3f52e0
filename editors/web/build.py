"""Build the pages' shared TypeScript (src/) into the web client: `npm ci` here (the lock file pins and checks every
package), type-check, bundle src/web.ts with esbuild into server/kgent/http/static/page.js, copy the rendering
libraries' licences beside it, and write vendor/MANIFEST.json: each library's version and lock-file integrity, and
the sha256 of the bundle and of its sources (tests/http/test_http_bundle.py checks that the bundle is current).

Run it after changing src/ or package.json (`npm install` first to update package-lock.json): python editors/web/build.py
The Python package ships the built files as package data, so installing kgent never needs npm. The VS Code extension
bundles the same src/ modules into its webview (editors/vscode, `npm run bundle`)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
STATIC = HERE.parents[1] / "server" / "kgent" / "http" / "static"
OUT = STATIC / "vendor"
BUNDLE = STATIC / "page.js"
LIBRARIES = {"markdown-it": "markdown-it.LICENSE", "dompurify": "dompurify.LICENSE", "highlight.js": "highlight.js.LICENSE"}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sources() -> str:
    """One hash over what the bundle is built from: every file of src/, package.json and the lock file."""
    h = hashlib.sha256()
    files = sorted(HERE.glob("src/**/*.ts")) + [HERE / "package.json", HERE / "package-lock.json"]
    for path in files:
        h.update(path.relative_to(HERE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def main() -> int:
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True)
    bin_ = HERE / "node_modules" / ".bin"
    subprocess.run([bin_ / "tsc", "-p", "."], cwd=HERE, check=True)
    subprocess.run(
        [
            bin_ / "esbuild",
            "src/web.ts",
            "--bundle",
            "--format=esm",
            "--platform=browser",
            "--target=es2022",
            "--minify",
            "--legal-comments=none",
            f"--outfile={BUNDLE}",
        ],
        cwd=HERE,
        check=True,
    )
    lock = json.loads((HERE / "package-lock.json").read_text())["packages"]
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    libraries = []
    for package, licence in LIBRARIES.items():
        shutil.copyfile(HERE / "node_modules" / package / "LICENSE", OUT / licence)
        locked = lock[f"node_modules/{package}"]
        libraries.append(
            {
                "package": package,
                "version": locked["version"],
                "integrity": locked["integrity"],
                "licence": licence,
                "sha256": sha256((OUT / licence).read_bytes()),
            }
        )
    esbuild = subprocess.run([bin_ / "esbuild", "--version"], capture_output=True, text=True, check=True)
    manifest = {
        "bundle": {
            "file": BUNDLE.name,
            "sha256": sha256(BUNDLE.read_bytes()),
            "sources": sources(),
            "esbuild": esbuild.stdout.strip(),
        },
        "libraries": libraries,
    }
    (OUT / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    sys.stdout.write(f"built {BUNDLE} ({BUNDLE.stat().st_size} bytes) and {len(libraries)} licences into {OUT}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
