"""One text per mode, saying what really runs unasked, asks or is refused (kgent.core.modes): ACP's modes, the
handshake's capabilities, the VS Code setting, the Neovim help, protocol.md, `kgent run --help` carry it word for
word (the web client shows the capabilities' text: tests/http/test_http_browser.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from kgent.acp.agent import MODES as ACP_MODES
from kgent.core.modes import MODE_DESCRIPTIONS, MODE_NAMES
from kgent.permissions import MODES, Intent, decide
from kgent.service import handshake
from kgent.service.handshake import Settings, capabilities

ROOT = Path(__file__).resolve().parents[2]


def _words(text: str) -> str:
    return " ".join(text.split())


def test_every_mode_has_one_description_and_one_name() -> None:
    assert tuple(MODE_DESCRIPTIONS) == MODES == tuple(MODE_NAMES)
    assert [m.name for m in ACP_MODES] == [MODE_NAMES[m] for m in MODES]


def test_acp_and_the_handshake_give_the_canonical_text() -> None:
    assert {m.id: m.description for m in ACP_MODES} == MODE_DESCRIPTIONS
    assert handshake.MODE_DESCRIPTIONS == MODE_DESCRIPTIONS  # generated into the boot path's tables.json
    assert capabilities(Settings(), {})["modeDescriptions"] == MODE_DESCRIPTIONS


def test_the_editors_carry_the_same_words() -> None:
    package = json.loads((ROOT / "editors/vscode/package.json").read_text())
    setting = package["contributes"]["configuration"]["properties"]["kgent.permissionMode"]
    assert dict(zip(setting["enum"], setting["enumDescriptions"], strict=True)) == MODE_DESCRIPTIONS
    doc = (ROOT / "editors/nvim/doc/kgent.txt").read_text()
    block = doc[doc.index("-- Permission mode") : doc.index("mode = nil")]
    text = _words(re.sub(r"^\s*--", "", block, flags=re.M))
    for mode, description in MODE_DESCRIPTIONS.items():
        assert f'"{mode}": {description}.' in text, mode


def test_protocol_md_and_the_cli_help_carry_the_same_words() -> None:
    protocol = _words((ROOT / "protocol.md").read_text())
    for mode, description in MODE_DESCRIPTIONS.items():
        assert f"- `{mode}`: {description}" in protocol, mode
    done = subprocess.run(
        [sys.executable, "-m", "kgent", "run", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    help_text = _words(done.stdout)
    for mode, description in MODE_DESCRIPTIONS.items():
        assert _words(f"{mode}: {description}.") in help_text, mode


def test_the_texts_say_what_the_policy_does() -> None:
    """The descriptions' claims, checked against the matrix: what runs unasked, what asks, what is refused."""

    def intent(tool: str, operation: str, scope: str, **kw: object) -> Intent:
        return Intent(tool=tool, operation=operation, scope=scope, reason="r", **kw)  # type: ignore[arg-type]

    read = intent("read", "read", "workspace", paths=("a.py",), subject="path")
    write = intent("write", "write", "workspace", paths=("a.py",), subject="path")
    command = intent("bash", "shell", "workspace", command="make", subject="command")
    network = intent("web_fetch", "network", "outside")
    outside = intent("read", "read", "outside", paths=("/etc/hosts",), subject="path")
    protected = intent("read", "read", "workspace", paths=(".env",), protected=True, subject="path")
    expected = {
        "plan": ("allow", "deny", "deny", "deny", "deny", "ask"),
        "ask": ("allow", "ask", "ask", "ask", "ask", "ask"),
        "auto": ("allow", "allow", "ask", "ask", "ask", "ask"),
        "full": ("allow", "allow", "allow", "allow", "allow", "allow"),
    }
    reading_command = intent("bash", "read", "workspace", command="cat a.py", subject="command")
    for mode, actions in expected.items():
        got = tuple(decide(mode, i).action for i in (read, write, command, network, outside, protected))  # type: ignore[arg-type]
        assert got == actions, mode
        assert decide(mode, reading_command, sandboxed=True).action == "allow", mode  # type: ignore[arg-type]
        if mode != "full":  # "in the sandbox": without one a read-only command asks
            assert decide(mode, reading_command, sandboxed=False).action == "ask", mode  # type: ignore[arg-type]
