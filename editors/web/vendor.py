"""Vendor the web client's rendering libraries: `npm ci` here (the lock file pins and checks every tarball), then copy
their browser builds and licences into server/kgent/http/static/vendor/ with a MANIFEST.json that names each file's
package, version, lock-file integrity and sha256 (tests/http/test_http_vendor.py checks all three).

Run it after changing package.json (`npm install` first to update package-lock.json): python editors/web/vendor.py
The Python package ships the copied files as package data, so installing kgent never needs npm."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parents[1] / "server" / "kgent" / "http" / "static" / "vendor"
# package → [(file in the package, name in vendor/)]: ES modules without imports (named .js: served as JavaScript everywhere), a stylesheet, the licences.
FILES = {
    "markdown-it": [
        ("dist/browser/markdown-it.esm.min.mjs", "markdown-it.js"),
        ("LICENSE", "markdown-it.LICENSE"),
    ],
    "dompurify": [
        ("dist/purify.es.mjs", "purify.js"),
        ("LICENSE", "dompurify.LICENSE"),
    ],
    "@highlightjs/cdn-assets": [
        ("es/highlight.min.js", "highlight.js"),
        ("styles/github.min.css", "highlight-github.css"),
        ("LICENSE", "highlight.js.LICENSE"),
    ],
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> int:
    subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=HERE, check=True)
    lock = json.loads((HERE / "package-lock.json").read_text())["packages"]
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    manifest = []
    for package, files in FILES.items():
        locked = lock[f"node_modules/{package}"]
        for source, name in files:
            shutil.copyfile(HERE / "node_modules" / package / source, OUT / name)
            manifest.append(
                {
                    "file": name,
                    "package": package,
                    "version": locked["version"],
                    "integrity": locked["integrity"],
                    "source": source,
                    "sha256": sha256(OUT / name),
                }
            )
    (OUT / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    sys.stdout.write(f"vendored {len(manifest)} files into {OUT}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
