"""The system prompt the loop sends: who the agent is, its tools, the workspace, the session's date.

It must be the same bytes on every request of a session, resumes included, or no provider can reuse its prompt
cache: so the date in it is the day the session was created, not today, and its skills are those the session
recorded first (a `skills` entry), not today's. With the `task` tool it also lists the sub-agents people defined
(kgent.context.agents) as they are when the run opens — the same bytes while no definition changes; an edited one
changes the prompt from the next run on (docs/agents.md). A defined sub-agent's own prompt ends with its instructions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from kgent.context import agents
from kgent.context.agents import AgentDefinition
from kgent.context.skills import Skill, prompt_section
from kgent.providers.base import ToolSchema

TASK_TOOL = "task"

_GUIDELINES = """\
- Use read to look at a file before you edit it; use grep, find and ls rather than bash to explore.
- Use edit for precise changes: oldText must match the file exactly and be unique.
- Use write only for new files or complete rewrites.
- Run tests or commands with bash to verify what you changed.
- Some calls need the user's approval; if one is denied (permission_denied), do not retry it unchanged: adapt.
- Be concise. When the task is done, say what you changed and how you verified it."""


def system_prompt(
    workspace: str,
    tools: Iterable[ToolSchema],
    *,
    day: str,
    skills: Sequence[Skill] = (),
    agents_defined: Sequence[AgentDefinition] | None = None,
) -> str:
    """The built-in prompt; `day` is the session's creation date (YYYY-MM-DD, UTC), fixed for its lifetime, and
    `skills` the skills the session recorded when it began (a later change is told in a message, not here).
    `agents_defined`: the sub-agent definitions to list when the tools include `task`; None reads those of the
    workspace and the user's config dir now (kgent.context.agents.defined)."""
    names = [t.name for t in tools]
    listed: Sequence[AgentDefinition] = ()
    if TASK_TOOL in names:
        listed = agents_defined if agents_defined is not None else agents.defined(Path(workspace))[0]
    sections = [s for s in (prompt_section(skills), agents.prompt_section(listed)) if s]
    return (
        "You are Kgent, a coding agent working in the user's workspace through tools. "
        "The user watches in their editor and approves every action that writes, runs or leaves the workspace.\n\n"
        f"Available tools: {', '.join(names)}.\n\nGuidelines:\n{_GUIDELINES}\n\n"
        + "".join(f"{s}\n\n" for s in sections)
        + f"Session started on: {day}\nWorkspace (current working directory): {workspace}"
    )
