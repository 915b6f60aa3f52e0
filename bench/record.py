"""Where every benchmark writes its figures: bench/results/NAME.json, headed by what they were measured on."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any


def record(path: Path, figures: dict[str, Any]) -> None:
    """Write `figures` to `path` (bench/results/NAME.json) after the benchmark's name, the interpreter, the machine,
    its cores and the load at the end (a benchmark's own `load_average`, e.g. at its start and end, replaces it)."""
    data = {
        "benchmark": path.stem,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        **figures,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {path}")
