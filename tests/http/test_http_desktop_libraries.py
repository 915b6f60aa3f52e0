"""`kgent desktop` on a fresh Debian: the libraries Qt's xcb platform plugin loads resolve, checked the way the dynamic
loader will (ldd on the plugin and on the Qt libraries it pulls in; kgent.cli.desktoplibs, which `kgent desktop` runs
before it starts Qt). A missing one makes Qt abort with "could not load the Qt platform plugin xcb" (exit 134); the
Makefile's system-tools installs them (QT_XCB_LIBS), and `kgent desktop` names their packages instead."""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kgent.cli import desktop, desktoplibs

ROOT = Path(__file__).resolve().parents[2]


def test_the_qt_xcb_platform_plugin_and_webengine_resolve_every_library() -> None:
    qt = desktoplibs.qt_root()
    assert qt is not None, "PyQt6 is not installed: the desktop extra (make setup installs it)"
    checked = desktoplibs.checked_libraries(qt)
    assert checked[0].is_file(), checked[0]
    missing = {str(lib.name): desktoplibs.unresolved(lib) for lib in checked}
    assert not any(missing.values()), (
        f"unresolved libraries (add their Debian packages to QT_XCB_LIBS): {missing}"
    )
    assert desktoplibs.missing_libraries() == []


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
    assert desktoplibs.unresolved(lib) == ["libkgentabsent.so"]
    # laid out as PyQt6's Qt, the probe stands for the xcb plugin: the check names what it lacks
    plugin = tmp_path / "Qt6" / "plugins" / "platforms" / "libqxcb.so"
    plugin.parent.mkdir(parents=True)
    lib.rename(plugin)
    assert desktoplibs.missing_libraries(tmp_path / "Qt6") == ["libkgentabsent.so"]


def test_the_packages_are_the_makefiles() -> None:
    """The sonames and packages `kgent desktop` names are the ones `make system-tools` installs."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    block = re.search(r"^QT_XCB_LIBS := ((?:.*\\\n)*.*)$", makefile, re.M)
    assert block is not None
    pairs = dict(item.split(":") for item in block.group(1).replace("\\\n", " ").split())
    assert pairs == desktoplibs.DEBIAN_PACKAGES


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    desktop.add_parser(parser.add_subparsers())
    return parser.parse_args(["desktop", *argv])


def test_kgent_desktop_names_the_packages_of_missing_libraries_and_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """With a library of the xcb plugin missing (faked), `kgent desktop` says which and the packages that have it,
    and exits 1 before it starts the server or Qt."""
    monkeypatch.setattr(
        desktoplibs, "missing_libraries", lambda qt=None: ["libkgentfake.so.9", "libxcb-cursor.so.0"]
    )
    import webview

    def started(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("Qt was started")

    monkeypatch.setattr(webview, "start", started)
    monkeypatch.setattr(webview, "create_window", started)
    assert desktop.run(_args("--workspace-root", str(tmp_path))) == 1
    err = capsys.readouterr().err
    assert "not installed: libkgentfake.so.9, libxcb-cursor.so.0" in err
    assert "sudo apt-get install libxcb-cursor0\n" in err
    assert "apt-file search NAME" in err and "libkgentfake.so.9" in err.splitlines()[2]
    assert "kgent serve --http" in err
