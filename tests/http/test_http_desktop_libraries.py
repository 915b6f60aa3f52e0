"""`kgent desktop` on a fresh Debian: the libraries Qt's xcb platform plugin loads resolve, checked the way the dynamic
loader will (ldd on the plugin and on the Qt libraries it pulls in). A missing one makes `kgent desktop` abort with
"could not load the Qt platform plugin xcb" (exit 134); the Makefile's system-tools installs them (QT_XCB_LIBS)."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path


def _qt_root() -> Path:
    spec = importlib.util.find_spec("PyQt6")
    assert spec is not None and spec.origin, (
        "PyQt6 is not installed: the desktop extra (make setup installs it)"
    )
    return Path(spec.origin).parent / "Qt6"


def _unresolved(library: Path) -> list[str]:
    out = subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=True).stdout
    return [line.split("=>")[0].strip() for line in out.splitlines() if "not found" in line]


def test_the_qt_xcb_platform_plugin_and_webengine_resolve_every_library() -> None:
    qt = _qt_root()
    plugin = qt / "plugins" / "platforms" / "libqxcb.so"
    assert plugin.is_file(), plugin
    checked = [
        plugin,
        *sorted((qt / "lib").glob("libQt6XcbQpa.so*")),
        *sorted((qt / "lib").glob("libQt6WebEngineCore.so*")),
    ]
    missing = {str(lib.name): _unresolved(lib) for lib in checked}
    assert not any(missing.values()), (
        f"unresolved libraries (add their Debian packages to QT_XCB_LIBS): {missing}"
    )


def test_the_checker_sees_a_missing_library(tmp_path: Path) -> None:
    """A library linked against a stand-in that is then removed: ldd reports the dangling soname, so the check above
    can fail."""
    (tmp_path / "absent.c").write_text("int absent(void) { return 1; }\n")
    (tmp_path / "probe.c").write_text("int probe(void) { return 0; }\n")
    stand_in, lib = tmp_path / "libkgentabsent.so", tmp_path / "libprobe.so"
    subprocess.run(["gcc", "-shared", "-o", str(stand_in), str(tmp_path / "absent.c")], check=True)
    link = [
        "gcc",
        "-shared",
        "-o",
        str(lib),
        str(tmp_path / "probe.c"),
        "-Wl,--no-as-needed",
        f"-L{tmp_path}",
    ]
    subprocess.run([*link, "-lkgentabsent"], check=True)
    stand_in.unlink()
    assert _unresolved(lib) == ["libkgentabsent.so"]
