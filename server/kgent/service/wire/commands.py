"""`agent/commands`: the slash commands a workspace offers (kgent.service.commands) — built-ins and prompt templates;
`agent/command`: the server's answer to one of them; `agent/exportSession`: a session as a transcript."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kgent.service.wire.base import AbsolutePath, Mode, NonEmptyStr, Params, Payload

Action = Literal["prompt", "answer", "newSession", "rewind"]
_ACTION = (
    "What a client does with it: `prompt` — send the typed text as agent/run's prompt (the daemon expands it); "
    "`answer` — send it to agent/command and show the answer; `newSession` — start the conversation afresh (the "
    "next prompt without a sessionId); `rewind` — open the client's rewind flow (agent/rewind)."
)


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
    action: Action = Field(description=_ACTION)


class MenuEntry(Payload):
    """One line of the slash menu, to show as it is: `/name`, the hint, the description."""

    name: str = Field(description="Typed as `/name args`.")
    description: str = Field(
        description="For people (no protocol names); a template's ends with where it comes from: `(project)`, "
        "`(user)`."
    )
    argument_hint: str | None = Field(default=None, description="Shown after the name.")
    action: Action = Field(description=_ACTION)


class CommandsResult(Payload):
    commands: list[CommandInfo] = Field(
        description="Built-ins first, then the project's, then the user's templates."
    )
    menu: list[MenuEntry] = Field(
        description="What a slash menu shows, in order: the commands that run (no shadowed template), each with "
        "the text to show. A front lays it out and filters it by what is typed; it derives nothing."
    )


class CommandParams(Params):
    text: NonEmptyStr = Field(description="The command as typed: `/name args`.")
    workspace: AbsolutePath | None = Field(
        default=None,
        description="The conversation's folder (default: the session's); one of the two is needed.",
    )
    session_id: NonEmptyStr | None = Field(
        default=None, description="The conversation's session, if it has one."
    )


class CommandResult(Payload):
    command: str = Field(description="The command's name.")
    action: Action = Field(description=_ACTION)
    text: str = Field(description="What to show the person, as it is (empty for `prompt` and `rewind`).")
    mode: Mode | None = Field(
        default=None,
        description="`/mode`: the mode of the session's next runs (also when only shown); a client shows it in its "
        "mode picker and sends it with its next runs.",
    )
    model: str | None = Field(
        default=None,
        description="`/model`: the model of the session's next runs (also when only shown), as `mode`.",
    )


ExportFormat = Literal["md", "html", "json"]


class ExportParams(Params):
    session_id: NonEmptyStr
    format: ExportFormat = Field(
        default="md", description="`md` (Markdown), `html` (one page, no script) or `json`."
    )


class ExportResult(Payload):
    text: str = Field(description="The transcript: the active branch, every string redacted.")
    mime_type: str = Field(description="`text/markdown`, `text/html` or `application/json`.")
    filename: str = Field(description="A name to save it under: `kgent-<sessionId>.<format>`.")
