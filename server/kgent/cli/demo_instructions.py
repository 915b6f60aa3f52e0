"""`kgent demo instructions`: the project's AGENTS.md files and a skill as the context's resources, on the scripted
provider — the root's sent before the prompt, src/AGENTS.md once a read touches src/, the skill in the system prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider

SCRIPT = "nested-instructions"
PROMPT = "Check src/app.py against the project's instructions."
FILES = {
    "AGENTS.md": "# Project rules\nRun `python -m pytest` after every change.\n",
    "src/AGENTS.md": "# src/\nFunctions here are pure and fully typed; this wins over the root's rules.\n",
    "src/app.py": "def double(x: int) -> int:\n    return 2 * x\n",
    ".kgent/skills/release/SKILL.md": (
        "---\nname: release\ndescription: Cut a release: bump the version, tag, write the notes.\n---\n"
        "1. Bump the version in pyproject.toml.\n"
    ),
}


def instructions_kernel(workspace: Path, renderer: Any) -> tuple[AgentKernel, str]:
    """Write the demo's files into `workspace`; a kernel whose runs load them (mode ask: reads are not asked)."""
    for rel, text in FILES.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    renderer.note({"demo": "the workspace has AGENTS.md, src/AGENTS.md and a skill in .kgent/skills/release"})
    provider = ScriptedProvider(SCRIPT)
    kernel = AgentKernel(provider, config=KernelConfig(mode="ask"))
    return kernel, PROMPT
