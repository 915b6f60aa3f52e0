"""`agent/commands`: the slash commands a workspace offers (kgent.service.commands) — built-ins and prompt templates."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kgent.service.wire.base import AbsolutePath, Params, Payload


class CommandsParams(Params):
    workspace: AbsolutePath


class CommandInfo(Payload):
    name: str = Field(description="Typed as `/name args` at the start of an agent/run prompt.")
    description: str = Field(description="The template's `description` front matter (else its first line).")
    argument_hint: str | None = Field(
        default=None, description="The template's `argument-hint` front matter: shown after the name."
    )
    source: Literal["builtin", "project", "user", "extension"]
    path: str | None = Field(default=None, description="The template file (templates only).")
    shadowed: bool | None = Field(
        default=None,
        description="True: another command of this name wins (a built-in over a template, a project template "
        "over a user one); listed so the user sees why this one does not run.",
    )


class MenuEntry(Payload):
    """One line of the slash menu, to show as it is: `/name`, the hint, the description."""

    name: str = Field(description="Typed as `/name args`.")
    description: str = Field(
        description="For people (no protocol names); a template's ends with where it comes from: `(project)`, "
        "`(user)`."
    )
    argument_hint: str | None = Field(default=None, description="Shown after the name.")


class CommandsResult(Payload):
    commands: list[CommandInfo] = Field(
        description="Built-ins first, then the project's, then the user's templates."
    )
    menu: list[MenuEntry] = Field(
        description="What a slash menu shows, in order: the commands that run (no shadowed template), each with "
        "the text to show. A front lays it out and filters it by what is typed; it derives nothing."
    )
