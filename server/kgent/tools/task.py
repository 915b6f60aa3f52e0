# Concept: the sub-agent tool — hand a self-contained task to a fresh agent with fewer tools; its answer is the result.
"""`TaskTool` (`task`): runs a sub-agent through the `SubAgentRunner` the kernel puts in the call's context. The
sub-agent starts from the task prompt alone (none of this conversation), with read-only tools unless the call names
others from the allowlist; its tool calls are classified and approved like the parent's, by the same host. `agent`
names a sub-agent people defined (`.kgent/agents/NAME.md`, kgent.context.agents): its instructions, its tools and
its mode ceiling, which the call's `tools` can narrow but never widen (the kernel resolves and checks it)."""

from __future__ import annotations

from typing import Any

from kgent.core.events import ToolKind
from kgent.tools.base import (
    CallDescription,
    FileChangePreview,
    SubAgentError,
    SubTask,
    ToolContext,
    ToolIntent,
    ToolOutput,
    error_output,
)

MAX_NAME = 60
DEFAULT_NAME = "sub-agent"


def agent_name(args: dict[str, Any]) -> str:
    """The name people see the sub-agent by: the call's `description`, on one line, capped."""
    raw = args.get("description")
    name = " ".join(raw.split()) if isinstance(raw, str) else ""
    return (name[: MAX_NAME - 1] + "…" if len(name) > MAX_NAME else name) or DEFAULT_NAME


class TaskTool:
    """Delegate a task to a sub-agent."""

    name = "task"
    kind: ToolKind = "think"  # as ACP agents show sub-agents
    read_only = False  # not run with reads: task calls of a turn run side by side among themselves (kernel/toolexec.py)
    intent = ToolIntent(effect="think", verb="starts a sub-agent")
    description = (
        "Hand a self-contained task to a sub-agent and get its final answer back. The sub-agent sees ONLY the prompt "
        "you give it (not this conversation), so say everything it needs: the goal, the files, what to report. It "
        "has the read-only tools (read, grep, find, ls) unless you list others in `tools`. Use it for searches and "
        "investigations whose details you do not need to keep in your own context."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "description": {
                "type": "string",
                "description": "A short (3-5 word) name for the task, shown to the user.",
            },
            "prompt": {"type": "string", "description": "The complete task for the sub-agent."},
            "tools": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Tool names the sub-agent may use (default: read, grep, find, ls).",
            },
            "agent": {
                "type": "string",
                "description": "A defined sub-agent to start (one the system prompt lists)",
            },
        },
        "required": ["description", "prompt"],
        "additionalProperties": False,
    }

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        """'Sub-agent: <description>', or 'Sub-agent <definition>: <description>' for a defined one."""
        defined = args.get("agent")
        which = (
            f" {' '.join(defined.split())[:MAX_NAME]}" if isinstance(defined, str) and defined.strip() else ""
        )
        return CallDescription(title=f"Sub-agent{which}: {agent_name(args)}")

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        """Starting a sub-agent changes nothing itself (its own calls are previewed and asked one by one)."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Run the sub-agent to its end; its final text is the result."""
        prompt = args.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return error_output("'prompt' must be a non-empty string")
        tools = args.get("tools")
        if tools is not None and not (isinstance(tools, list) and all(isinstance(t, str) for t in tools)):
            return error_output("'tools' must be an array of tool names")
        defined = args.get("agent")
        if defined is not None and not (isinstance(defined, str) and defined.strip()):
            return error_output("'agent' must be the name of a defined sub-agent")
        if ctx.subagents is None:
            return error_output("sub-agents are not available here")
        task = SubTask(
            prompt=prompt,
            agent=agent_name(args),
            tools=tuple(tools) if tools is not None else None,
            definition=defined.strip() if defined is not None else None,
        )
        try:
            result = await ctx.subagents.run(task)
        except SubAgentError as e:
            return error_output(str(e))
        details = {"runId": result.run_id, "status": result.status, "turns": result.turns}
        if result.status == "settled":
            return ToolOutput(
                content=result.text or "(the sub-agent finished without an answer)", details=details
            )
        if result.status == "cancelled":
            return ToolOutput(
                content="cancelled: the sub-agent was cancelled", is_error=True, details=details
            )
        why = result.error or "the sub-agent failed"
        partial = f"\nIts last text: {result.text}" if result.text else ""
        return ToolOutput(content=f"sub-agent failed: {why}{partial}", is_error=True, details=details)
