"""The release gate of `make lint`: `python -m build` makes a wheel and an sdist that install in a clean venv, where
`kgent --help` runs and a scripted demo plays (so the package data — scripts, prices, the web client — shipped)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*argv: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and not k.endswith("_API_KEY")}
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=True
    )


@pytest.mark.timeout(1500)  # a build and an install of every dependency: minutes on a loaded 2-core machine
def test_the_wheel_and_the_sdist_install_in_a_clean_venv(tmp_path: Path) -> None:
    source = tmp_path / "src"  # a copy, so the build leaves nothing in the work tree
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            "node_modules",
            "__pycache__",
            "*.egg-info",
            "build",
            "dist",
            ".*_cache",
            "editors",
        ),
    )
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "build", "--outdir", dist, source)
    wheels, sdists = list(dist.glob("kgent-*.whl")), list(dist.glob("kgent-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env)
    python, kgent = env / "bin" / "python", env / "bin" / "kgent"
    # the wheel with its dependencies; then the sdist (built into a wheel by pip) over it
    for artifact, extra in ((wheels[0], ()), (sdists[0], ("--no-deps", "--force-reinstall"))):
        _run(python, "-m", "pip", "install", "-q", *extra, artifact)
        installed = _run(python, "-m", "pip", "show", "-f", "kgent").stdout
        assert "kgent/scripts/streamed-run.json" in installed and "kgent/http/static/app.js" in installed
        helped = _run(kgent, "--help", cwd=tmp_path)
        assert "demo" in helped.stdout and "serve" in helped.stdout
        played = _run(kgent, "demo", "streamed-run", cwd=tmp_path)
        assert '"type": "run_end"' in played.stdout.splitlines()[-1]
