"""Before `kgent desktop` starts Qt: the libraries Qt's xcb platform plugin (and the web engine) load must resolve.
When one is missing, Qt aborts the whole process (exit 134, "could not load the Qt platform plugin xcb") with a hint
that names no package. Checked as the dynamic loader will load them — `ldd` on the plugin and on the Qt libraries it
pulls in — so that `kgent desktop` can say instead which Debian packages to install. Linux only (elsewhere Qt uses
another platform plugin, and there is no `ldd`)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

# soname → the Debian package that has it: the Makefile's QT_XCB_LIBS, which `make system-tools` installs (a test
# keeps the two the same).
DEBIAN_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libdbus-1.so.3": "libdbus-1-3",
    "libnss3.so": "libnss3",
    "libasound.so.2": "libasound2",
}


def qt_root() -> Path | None:
    """PyQt6's own Qt (`…/PyQt6/Qt6`), or None when PyQt6 is not installed."""
    spec = importlib.util.find_spec("PyQt6")
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent / "Qt6"


def checked_libraries(qt: Path) -> list[Path]:
    """The xcb platform plugin and the Qt libraries it loads that need system libraries."""
    return [
        qt / "plugins" / "platforms" / "libqxcb.so",
        *sorted((qt / "lib").glob("libQt6XcbQpa.so*")),
        *sorted((qt / "lib").glob("libQt6WebEngineCore.so*")),
    ]


def unresolved(library: Path) -> list[str]:
    """The sonames `library` needs that the dynamic loader cannot find (ldd's "not found")."""
    out = subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=True).stdout
    return [line.split("=>")[0].strip() for line in out.splitlines() if "not found" in line]


def missing_libraries(qt: Path | None = None) -> list[str]:
    """Every soname the Qt of `qt` (default: PyQt6's) cannot load, sorted; [] when all resolve or when this cannot be
    checked here (no PyQt6, no xcb plugin, no ldd: Qt then says for itself what is wrong)."""
    qt = qt if qt is not None else qt_root()
    if qt is None or shutil.which("ldd") is None:
        return []
    found: set[str] = set()
    for library in checked_libraries(qt):
        if library.is_file():
            try:
                found.update(unresolved(library))
            except (OSError, subprocess.CalledProcessError):
                continue
    return sorted(found)


def missing_message(missing: list[str]) -> str:
    """What `kgent desktop` says when libraries are missing: which, and the Debian packages that have them."""
    packages = sorted({DEBIAN_PACKAGES[m] for m in missing if m in DEBIAN_PACKAGES})
    unknown = [m for m in missing if m not in DEBIAN_PACKAGES]
    lines = [
        "kgent: desktop cannot start Qt: its xcb platform plugin needs system libraries that are not installed: "
        + ", ".join(missing)
    ]
    if packages:
        lines.append(f"kgent: on Debian or Ubuntu: sudo apt-get install {' '.join(packages)}")
    if unknown:
        lines.append(f"kgent: find the package of {', '.join(unknown)} with `apt-file search NAME`")
    lines.append("kgent: or use the web client in a browser: kgent serve --http")
    return "\n".join(lines) + "\n"
