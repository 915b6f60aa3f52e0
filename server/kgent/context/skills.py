"""Skills, a resource of the context: folders with a `SKILL.md` (the Agent Skills format Claude Code and Pi read:
front matter with `name` and `description`, then the body) in `<workspace>/.kgent/skills/`, `<user config dir>/skills/`
and the directories extensions register. Only name, description and path reach the system prompt; the model reads
the body with `read` when a task calls for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def load_skill(skill_md: Path) -> Skill | None:
    """One skill, or None when its SKILL.md has no usable name and description."""
    try:
        with skill_md.open("rb") as fh:
            head = fh.read(MAX_HEAD).decode("utf-8", errors="replace")
    except OSError:
        return None
    meta = front_matter(head)
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


def discover(dirs: Sequence[Path]) -> list[Skill]:
    """The skills in `dirs` (each a folder of skill folders), sorted by name; a name found twice keeps the first."""
    found: dict[str, Skill] = {}
    for base in dirs:
        try:
            children = sorted(p for p in base.iterdir() if p.is_dir())
        except OSError:
            continue
        for child in children:
            skill_md = child / FILE
            if not skill_md.is_file():
                continue
            skill = load_skill(skill_md)
            if skill is not None and skill.name not in found:
                found[skill.name] = skill
    return sorted(found.values(), key=lambda s: s.name)


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


def inside_skill(path: Path, skills: Iterable[Skill]) -> bool:
    """Whether `path` (resolved) lies in one of the skills' folders (resolved)."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return False
    return any(real.is_relative_to(Path(s.directory).resolve()) for s in skills)
