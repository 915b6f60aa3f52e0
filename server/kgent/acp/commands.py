"""The workspace's slash menu (kgent.service.commands.menu) as ACP's `available_commands_update`: sent after
session/new and session/load, so the client's composer completes `/name` (the prompt's expansion is the service's).
The commands a client does itself (`/clear`, `/rewind`: a new session, a rewind flow) are left out: an ACP agent can
do neither for its client."""

from __future__ import annotations

from acp import helpers as H
from acp import schema as S

from kgent.service.commands import Command, menu


def available_commands(commands: list[Command]) -> S.AvailableCommandsUpdate:
    """The menu's entries (the commands that run, described for people), each argument hint as ACP's input hint."""
    return H.update_available_commands(
        S.AvailableCommand(
            name=e.name,
            description=e.description,
            input=S.AvailableCommandInput(root=S.UnstructuredCommandInput(hint=e.argument_hint))
            if e.argument_hint
            else None,
        )
        for e in menu(commands)
        if e.action in ("prompt", "answer")
    )
