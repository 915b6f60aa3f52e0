# Concept: the files that configure Kgent or would run code later outside the sandbox (Kgent's own config, MCP
# servers, editors' workspace settings and tasks, git hooks and config, direnv, editor exrc files, commit hooks).
"""`configures(rel)`: whether a workspace-relative path is one of them — asked before any write in every mode but
full (kgent.permissions), and written by the gate only for an approval that saw it."""

from __future__ import annotations

from typing import Final

# Directories whose every file counts, wherever they are in the tree (editors and tools read nested ones too).
CONFIG_DIRS: Final = frozenset(
    {
        ".kgent",  # rules, extensions, MCP servers, skills, prompt templates, agents
        ".vscode",  # settings (kgent.*, terminal profiles), tasks.json (runs on folder open), launch.json
        ".idea",  # JetBrains run configurations and startup tasks
        ".devcontainer",  # commands an editor runs when it opens the folder in a container
        ".husky",  # git hooks installed by husky
    }
)
# Files that count by name, wherever they are.
CONFIG_FILES: Final = frozenset(
    {
        ".mcp.json",  # MCP servers other agents (and Kgent) start
        ".envrc",  # direnv runs it on entering the directory
        ".nvim.lua",  # Neovim's exrc files
        ".nvimrc",
        ".exrc",
        ".vimrc",
        ".gvimrc",
        ".pre-commit-config.yaml",  # pre-commit's hooks
        ".pre-commit-config.yml",
        "lefthook.yml",  # lefthook's hooks
        "lefthook.yaml",
        ".lefthook.yml",
        ".lefthook.yaml",
    }
)
# Inside a `.git` directory: what runs code on the user's next git command.
GIT_CONFIG: Final = ("hooks", "config", "info/attributes")


def configures(rel: str) -> bool:
    """Whether the workspace-relative posix path `rel` configures Kgent, an editor or git, or runs code later outside
    the sandbox (names compared without case: some file systems ignore it)."""
    parts = [p for p in rel.lower().split("/") if p not in ("", ".")]
    if not parts:
        return False
    if parts[-1] in CONFIG_FILES or any(p in CONFIG_DIRS for p in parts):
        return True
    if ".git" in parts:
        after = "/".join(parts[parts.index(".git") + 1 :])
        return any(after == name or after.startswith(name + "/") for name in GIT_CONFIG)
    return False
