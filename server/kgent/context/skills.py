"""Skills, a resource of the context: folders with a `SKILL.md` (the Agent Skills format Claude Code and Pi read:
front matter with `name` and `description`, then the body) in `<workspace>/.kgent/skills/`, `<user config dir>/skills/`
and the directories extensions register. Only name, description and path reach the system prompt; the model reads
the body with `read` when a task calls for it. Folders and SKILL.md files are found and read through the files gate:
a project's skill folder or SKILL.md that links outside the workspace, to a secret, or has several hard links is
left out (and named, `Skipped`); the user's and extensions' skills may link anywhere but to a secret.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgent.context.instructions import Skipped
from kgent.files import gate

FILE = "SKILL.md"
ENTRY_TYPE = "skills"  # a session entry {skills: [{name, description, path}]}: what the system prompt listed
MAX_DESCRIPTION = 1024  # characters (the Agent Skills limit); longer ones are cut
MAX_HEAD = 16 * 1024  # bytes of a SKILL.md read to find its front matter
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    name: str
    description: str
    path: str  # the SKILL.md, absolute

    @property
    def directory(self) -> str:
        return str(Path(self.path).parent)

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "description": self.description, "path": self.path}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Skill:
        return cls(
            name=str(d.get("name", "")),
            description=str(d.get("description", "")),
            path=str(d.get("path", "")),
        )


def front_matter(text: str) -> dict[str, str]:
    """The `key: value` lines between the opening `---` and the next one (a folded `>` / `|` value continues on the
    indented lines after it; quotes around a value are removed). A subset of YAML: what SKILL.md files use."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    out: dict[str, str] = {}
    key: str | None = None
    for line in lines[1:]:
        if line.strip() == "---":
            break
        if key is not None and line[:1] in (" ", "\t") and line.strip():
            out[key] = (out[key] + " " + line.strip()).strip()
            continue
        match = re.match(r"^([A-Za-z0-9_-]+):\s*(.*)$", line)
        if match is None:
            key = None
            continue
        key, value = match.group(1), match.group(2).strip()
        if value in (">", "|", ">-", "|-"):
            value = ""
        elif len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key] = value
    return out


def load_skill(skill_md: Path, *, root: Path, outside_ok: bool = False) -> Skill | Skipped | None:
    """One skill, or None when its SKILL.md has no usable name and description, or Skipped when the files gate
    refuses the SKILL.md (under `root`)."""
    try:
        data, _ = gate.read_head(root, skill_md, limit=MAX_HEAD, outside_ok=outside_ok)
    except gate.Refused as refused:
        return Skipped(path=str(skill_md), reason=refused.reason)
    except (OSError, ValueError):
        return None
    meta = front_matter(data[:MAX_HEAD].decode("utf-8", errors="replace"))
    name = meta.get("name", "").strip() or skill_md.parent.name
    description = " ".join(meta.get("description", "").split())[:MAX_DESCRIPTION]
    if not _NAME.match(name) or not description:
        return None
    return Skill(name=name, description=description, path=str(skill_md.absolute()))


def skill_dirs(workspace: Path, user_dir: Path | None, extra: Iterable[Path] = ()) -> list[Path]:
    """Where skills are looked for, the first finder of a name winning: the project's, the user's, extensions'."""
    dirs = [workspace / ".kgent" / "skills"]
    if user_dir is not None:
        dirs.append(user_dir / "skills")
    return dirs + list(extra)


def discover(dirs: Sequence[Path], workspace: Path | None = None) -> tuple[list[Skill], list[Skipped]]:
    """The skills in `dirs` (each a folder of skill folders), sorted by name — a name found twice keeps the first —
    and the folders and SKILL.md files the gate refused. A folder inside `workspace` is judged under it (nothing may
    lead outside); any other folder under itself, its links free to lead anywhere but to a secret."""
    found: dict[str, Skill] = {}
    skipped: list[Skipped] = []
    for base in dirs:
        own = workspace is not None and _within(base, workspace)
        root = workspace if own and workspace is not None else base
        outside_ok = not own
        for child in _folders(base, root, outside_ok, skipped):
            skill_md = child / FILE
            if not skill_md.is_file() and not skill_md.is_symlink():
                continue
            skill = load_skill(skill_md, root=root, outside_ok=outside_ok)
            if isinstance(skill, Skipped):
                skipped.append(skill)
            elif skill is not None and skill.name not in found:
                found[skill.name] = skill
    return sorted(found.values(), key=lambda s: s.name), skipped


def _within(path: Path, root: Path) -> bool:
    return os.path.abspath(path).startswith(os.path.abspath(root).rstrip(os.sep) + os.sep)


def _folders(base: Path, root: Path, outside_ok: bool, skipped: list[Skipped]) -> list[Path]:
    """The skill folders of `base` the gate admits; a folder that leads outside `root` (or to a secret) is named."""
    folders, refused = gate.subdirectories(root, base, outside_ok=outside_ok)
    skipped += [Skipped(path=str(base / r.shown_name), reason=r.reason) for r in refused]
    return folders


def entry_skills(data: Mapping[str, Any]) -> list[Skill]:
    items = data.get("skills")
    if not isinstance(items, list):
        return []
    return [Skill.from_dict(d) for d in items if isinstance(d, dict) and d.get("name")]


def prompt_section(skills: Sequence[Skill]) -> str:
    """The system prompt's "Skills" section ('' without skills)."""
    if not skills:
        return ""
    lines = [
        "Skills (instructions and scripts for particular tasks): when a task matches a skill's description, read "
        "its SKILL.md with the read tool first and follow it; paths in it are relative to its folder.",
    ]
    lines += [f"- {s.name}: {s.description} ({s.path})" for s in skills]
    return "\n".join(lines)


def changed_note(skills: Sequence[Skill]) -> str:
    """The context message saying the skills changed since the system prompt listed them."""
    body = "\n".join(f"- {s.name}: {s.description} ({s.path})" for s in skills) or "(none)"
    return f"<skills>\nThe available skills changed; this list replaces the one in the system prompt:\n{body}\n</skills>"


def inside_skill(path: Path, skills: Iterable[Skill], workspace: Path) -> bool:
    """Whether `path` lies in one of the skills' folders after symlinks and the files gate admits it there (not a
    secret, not hard-linked): a read of a listed skill's folder. A folder in the workspace must still be inside it
    (a project's skill folder swapped for a link out counts for nothing)."""
    for s in skills:
        folder = Path(s.directory)
        try:
            if _within(folder, workspace) and not gate.admit(workspace, folder).inside:
                continue
            if gate.admit(folder, path).inside:
                return True
        except gate.Refused:
            continue
    return False
