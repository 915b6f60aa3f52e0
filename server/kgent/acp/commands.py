"""The workspace's slash commands (kgent.service.commands) as ACP's `available_commands_update`: sent after
session/new and session/load, so the client's composer completes `/name` (the prompt's expansion is the service's)."""

from __future__ import annotations

from acp import helpers as H
from acp import schema as S

from kgent.service.commands import Command


def available_commands(commands: list[Command]) -> S.AvailableCommandsUpdate:
    """The commands that run (a shadowed template does not), each with its argument hint as ACP's input hint."""
    return H.update_available_commands(
        S.AvailableCommand(
            name=c.name,
            description=c.description,
            input=S.AvailableCommandInput(root=S.UnstructuredCommandInput(hint=c.argument_hint))
            if c.argument_hint
            else None,
        )
        for c in commands
        if not c.shadowed
    )
