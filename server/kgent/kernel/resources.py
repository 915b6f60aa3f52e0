"""A run's context resources (seed 001's "current authoritative resources"): the instruction files and skills the
loop records as session entries. Returns values (entry data, the event to emit); the loop persists and emits them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgent.context.instructions import ENTRY_TYPE as INSTRUCTIONS
from kgent.context.instructions import InstructionFile, InstructionSet, Skipped, latest, ordered
from kgent.context.projection import own_context
from kgent.context.skills import ENTRY_TYPE as SKILLS
from kgent.context.skills import Skill, discover, entry_skills, inside_skill, skill_dirs
from kgent.core.events import InstructionsEvent, LoadedFile, SkippedFile
from kgent.core.messages import ToolCall, ToolResultMessage
from kgent.core.paths import user_config_dir
from kgent.session.entries import SessionEntry
from kgent.tools.base import Tool


@dataclass(frozen=True, slots=True, kw_only=True)
class Found:
    """Files to record: the entry's data and the event that tells the host."""

    data: dict[str, Any]
    files: tuple[InstructionFile, ...]
    skipped: tuple[Skipped, ...] = ()  # refused by the files gate: named in the event, never read

    def event(self, entry_id: str) -> InstructionsEvent:
        return InstructionsEvent(
            files=loaded(self.files),
            entry_id=entry_id,
            skipped=tuple(SkippedFile(path=s.path, reason=s.reason) for s in self.skipped),
        )


def loaded(files: Sequence[InstructionFile]) -> tuple[LoadedFile, ...]:
    return tuple(
        LoadedFile(path=f.path, source=f.source, change=f.change, truncated=f.truncated, size=f.size)
        for f in files
    )


class RunResources:
    """What one run's context knows of the instruction files and skills, from its branch and the disk."""

    def __init__(
        self,
        workspace: Path,
        branch: Sequence[SessionEntry],
        *,
        enabled: bool,
        extra_skill_dirs: Sequence[Path] = (),
    ) -> None:
        self.enabled = enabled
        self.user_dir = user_config_dir() if enabled else None
        known = latest(e.data for e in branch if e.type == INSTRUCTIONS)
        self.instructions = InstructionSet(workspace=workspace, user_dir=self.user_dir, known=dict(known))
        recorded = [e for e in branch if e.type == SKILLS]
        in_prompt = next((e for e in recorded if e.data.get("inPrompt")), None)
        # A branch with no conversation yet (a new session, a sub-agent's fresh context) lists today's skills in its
        # system prompt; a later branch keeps the list its prompt began with, and a change is told in a message.
        self.fresh = not any(e.type in ("message", INSTRUCTIONS, SKILLS) for e in branch)
        self.workspace = workspace
        self.skills: list[Skill] = []
        self.skipped_skills: list[Skipped] = []
        if enabled:
            self.skills, self.skipped_skills = discover(
                skill_dirs(workspace, self.user_dir, extra_skill_dirs), workspace
            )
        if self.fresh:
            self.prompt_skills = self.skills
        else:
            self.prompt_skills = entry_skills(in_prompt.data) if in_prompt is not None else []
        last = entry_skills(recorded[-1].data) if recorded else []
        self._entry: dict[str, Any] | None = None
        if self.fresh and self.skills:
            self._entry = {"skills": [s.to_dict() for s in self.skills], "inPrompt": True}
        elif not self.fresh and enabled and last != self.skills:
            self._entry = {"skills": [s.to_dict() for s in self.skills]}

    def skills_entry(self) -> dict[str, Any] | None:
        """The `skills` entry to record when the run opens (`inPrompt`: the list its system prompt carries); None
        when the branch already has these skills."""
        return self._entry

    def opening(self) -> Found | None:
        """The instruction files to record when the run opens: new, changed or removed since the branch saw them."""
        if not self.enabled:
            return None
        files = self.instructions.start()
        skipped, self.skipped_skills = [*self.skipped_skills, *self.instructions.take_skipped()], []
        return _found(files, skipped)

    def touched(
        self, tools: dict[str, Tool], calls: Sequence[ToolCall], results: Sequence[ToolResultMessage]
    ) -> Found | None:
        """Instruction files of the directories the batch's successful file calls touched (new or changed ones)."""
        if not self.enabled:
            return None
        failed = {r.tool_call_id for r in results if r.is_error}
        paths: list[str] = []
        for call in calls:
            tool = tools.get(call.name)
            intent = getattr(tool, "intent", None)
            if call.id in failed or intent is None or intent.path_arg is None:
                continue
            raw = call.arguments.get(intent.path_arg, intent.default_path)
            if isinstance(raw, str) and raw and "\0" not in raw:
                paths.append(raw)
        if not paths:
            return None
        files = self.instructions.touched(paths)
        return _found(files, self.instructions.take_skipped())

    def is_skill_file(self, path: Path) -> bool:
        """Whether `path` is inside the folder of a skill this run listed to the model (a read of a known resource)."""
        return inside_skill(path, [*self.prompt_skills, *self.skills], self.workspace)


def _found(files: list[InstructionFile], skipped: Sequence[Skipped] = ()) -> Found | None:
    if not files and not skipped:
        return None
    data: dict[str, Any] = {"files": [f.to_dict() for f in files]}
    if skipped:
        data["skipped"] = [s.to_dict() for s in skipped]
    return Found(data=data, files=tuple(files), skipped=tuple(skipped))


def loaded_resources(branch: Sequence[SessionEntry]) -> dict[str, Any]:
    """What a branch's context holds now, for hosts (`agent/session`): `instructions` (each file's latest state,
    general → specific) and `skills` (the latest list the model was given)."""
    own = own_context(branch)
    files = ordered(latest(e.data for e in own if e.type == INSTRUCTIONS).values())
    listed = [e for e in own if e.type == SKILLS]
    return {
        "instructions": [
            {"path": f.path, "source": f.source, "change": f.change, "truncated": f.truncated, "size": f.size}
            for f in files
        ],
        "skills": [s.to_dict() for s in entry_skills(listed[-1].data)] if listed else [],
    }
