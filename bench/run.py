"""`make bench`: run every benchmark in bench/ (each prints its table and writes bench/results/NAME.json).

Each benchmark measures its own floor in the same run and reports ratios/overheads against it; machines here are
noisy, so read the figures as ranges. `python bench/run.py providers` runs just that one.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    names = argv or sorted(
        p.stem for p in HERE.glob("*.py") if p.stem not in ("run", "__init__", "floor", "record")
    )
    failed = []
    for name in names:
        print(f"\n=== bench/{name}.py ===", flush=True)
        started = time.monotonic()
        rc = subprocess.call([sys.executable, str(HERE / f"{name}.py")])
        print(f"--- {name}: exit {rc} in {time.monotonic() - started:.1f}s", flush=True)
        if rc:
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
