"""What clients send: the params of every request (and notification) the daemon serves, how a prompt's content
blocks become the one text the kernel takes, and the answer to an `agent/permission` request.

`initialize` is validated on the boot path by kgent.service.handshake (stdlib only: it is answered before pydantic is
loaded); InitializeParams describes the same shape for the schema, and a test keeps the two in agreement.
"""

from __future__ import annotations

import base64
import binascii
import functools
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError
from typing_extensions import TypeAliasType

from kgent.core.images import MAX_IMAGE_BYTES, MAX_IMAGES, image_part, image_problem
from kgent.core.messages import ImagePart
from kgent.service.wire.base import AbsolutePath, Mode, NonBlankStr, NonEmptyStr, Params, PositiveNumber
from kgent.service.wire.files import ClientCapabilities

# -- initialize ----------------------------------------------------------------------------------------------------


class ClientInfo(Params):
    """Who the client is (for logs)."""

    name: str = ""
    version: Any = Field(default=None, description="Not checked.")


class InitializeSettings(Params):
    """Connection-wide overrides of the environment; they apply to runs started afterwards."""

    provider: NonBlankStr | None = None
    model: NonBlankStr | None = None
    base_url: NonBlankStr | None = None
    api_key: NonBlankStr | None = None
    mode: Mode | None = None
    approval_timeout: Annotated[float, Field(gt=0, lt=1e9)] | None = Field(
        default=None, description="Seconds an approval may take before it counts as a reject; null: no limit."
    )
    max_turns: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description="Model turns a run may take (runs started afterwards); default: KGENT_MAX_TURNS.",
    )
    fs_timeout: Annotated[float, Field(gt=0, lt=1e9)] | None = Field(
        default=None,
        description="Seconds the client may take to answer a file request (agent/readTextFile, …) before the "
        "daemon uses the disk; default KGENT_FS_TIMEOUT or 10.",
    )
    trust_project_extensions: bool | None = Field(
        default=None,
        description="Whether the project's own extensions and MCP servers (.kgent/config.toml, .mcp.json) may run; "
        "null: the user's trust file decides (`kgent extensions --trust`).",
    )


class InitializeParams(Params):
    protocol_version: Annotated[int, Field(ge=1)] = Field(
        description="The latest protocol version the client speaks."
    )
    client_info: ClientInfo | None = None
    capabilities: ClientCapabilities | None = Field(
        default=None, description="What the client offers (fs: host-owned files); {} for nothing."
    )
    settings: InitializeSettings | None = None


# -- agent/run: the prompt -------------------------------------------------------------------------------------------


class TextBlock(Params):
    type: Literal["text"]
    text: str


class ResourceLinkBlock(Params):
    type: Literal["resource_link"]
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None


class TextResource(Params):
    uri: str
    text: str
    mime_type: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _text_only(cls, data: Any) -> Any:
        if isinstance(data, dict) and "blob" in data and "text" not in data:
            raise PydanticCustomError("invalid_params", "must be a text resource ('blob' is not supported)")
        return data


class ResourceBlock(Params):
    type: Literal["resource"]
    resource: TextResource


class ImageBlock(Params):
    """An image (ACP's ImageContent): PNG, JPEG, WebP or GIF, told by its bytes; at most 5 MiB decoded."""

    type: Literal["image"]
    data: str = Field(
        description="The image's bytes, base64 (standard alphabet, padded); at most 5 MiB once decoded."
    )
    mime_type: str = Field(
        description="image/png, image/jpeg, image/webp or image/gif; the bytes decide the type the model is told."
    )
    uri: str | None = Field(
        default=None,
        description="Where the image came from (a file name or URI), kept as its name; the daemon never reads it.",
    )
    _part: ImagePart | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _decoded(self) -> ImageBlock:
        if len(self.data) > (MAX_IMAGE_BYTES + 2) // 3 * 4 + 4:
            raise PydanticCustomError(
                "invalid_params",
                "is over the limit of {limit} bytes (5 MiB) per image",
                {"limit": MAX_IMAGE_BYTES},
            )
        try:
            raw = base64.b64decode(self.data, validate=True)
        except (binascii.Error, ValueError):
            raise PydanticCustomError("invalid_params", "has 'data' that is not base64") from None
        problem = image_problem(raw, self.mime_type)
        if problem is not None:
            raise PydanticCustomError("invalid_params", problem)
        name = (self.uri or "").rsplit("/", 1)[-1][:200]
        self._part = image_part(raw, name)
        return self

    @property
    def part(self) -> ImagePart:
        assert self._part is not None
        return self._part


BLOCK_TYPES = ("text", "resource_link", "resource", "image")


def _supported_block(value: Any) -> Any:
    if isinstance(value, dict) and value.get("type") not in BLOCK_TYPES:
        kind, supported = value.get("type"), ", ".join(BLOCK_TYPES)
        if kind is None:
            raise PydanticCustomError(
                "invalid_params", "needs a 'type' (one of {supported})", {"supported": supported}
            )
        raise PydanticCustomError(
            "invalid_params",
            "has an unsupported content type {kind} (supported: {supported})",
            {"kind": repr(kind)[:40], "supported": supported},
        )
    return value


def _block_tag(value: Any) -> str | None:
    return f"{value['type']} block" if isinstance(value, dict) else None


ContentBlock = TypeAliasType(
    "ContentBlock",
    Annotated[
        Annotated[TextBlock, Tag("text block")]
        | Annotated[ResourceLinkBlock, Tag("resource_link block")]
        | Annotated[ResourceBlock, Tag("resource block")]
        | Annotated[ImageBlock, Tag("image block")],
        Discriminator(
            _block_tag,
            custom_error_type="invalid_params",
            custom_error_message="must be a content block object",
        ),
        BeforeValidator(_supported_block),
    ],
)


def _prompt_tag(value: Any) -> str | None:
    return "string prompt" if isinstance(value, str) else "block prompt" if isinstance(value, list) else None


Prompt = Annotated[
    Annotated[NonBlankStr, Tag("string prompt")]
    | Annotated[list[ContentBlock], Field(min_length=1), Tag("block prompt")],
    Discriminator(
        _prompt_tag,
        custom_error_type="invalid_params",
        custom_error_message="must be a string or a non-empty array of content blocks",
    ),
]


Block = TextBlock | ResourceLinkBlock | ResourceBlock | ImageBlock


def block_text(block: Block) -> str:
    match block:
        case TextBlock(text=text):
            return text
        case ResourceLinkBlock(uri=uri, name=name):
            return f"[{name}]({uri})"
        case ResourceBlock(resource=res):
            return f'<resource uri="{res.uri}">\n{res.text}\n</resource>'
        case ImageBlock():
            return ""


def prompt_text(prompt: str | list[Block]) -> str:
    """A prompt as the one text the kernel takes: its text blocks joined by a blank line (images go beside it)."""
    if isinstance(prompt, str):
        return prompt
    return "\n\n".join(text for b in prompt if (text := block_text(b)))


def prompt_images(prompt: str | list[Block]) -> tuple[ImagePart, ...]:
    """The prompt's images, in order."""
    return () if isinstance(prompt, str) else tuple(b.part for b in prompt if isinstance(b, ImageBlock))


class RunParams(Params):
    """Start a run (a new session, or a turn of an existing one)."""

    prompt: Prompt
    session_id: NonEmptyStr | None = Field(
        default=None, description="Continue this session; absent: a new one."
    )
    parent_entry_id: NonEmptyStr | None = Field(
        default=None, description="With sessionId: continue from this entry instead of the active leaf."
    )
    workspace: AbsolutePath | None = Field(
        default=None,
        validate_default=True,
        description="Where tools run; required unless sessionId is given.",
    )
    mode: Mode | None = None
    provider: NonEmptyStr | None = None
    model: NonEmptyStr | None = None
    cost_limit: PositiveNumber | None = Field(
        default=None,
        description="US dollars this run may spend (needs a priced model); default: KGENT_COST_LIMIT.",
    )
    max_turns: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description="Model turns this run may take; default: settings.maxTurns, else KGENT_MAX_TURNS, else 200.",
    )

    @field_validator("prompt")
    @classmethod
    def _not_empty(cls, value: str | list[Any]) -> str | list[Any]:
        images = len(prompt_images(value))
        if images > MAX_IMAGES:
            raise PydanticCustomError(
                "invalid_params",
                "has {n} images: at most {limit} images per prompt",
                {"n": images, "limit": MAX_IMAGES},
            )
        if not images and not prompt_text(value).strip():
            raise PydanticCustomError("invalid_params", "must not be empty")
        return value

    @field_validator("parent_entry_id")
    @classmethod
    def _needs_session(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("session_id") is None:
            raise PydanticCustomError("invalid_params", "needs a 'sessionId'")
        return value

    @field_validator("workspace")
    @classmethod
    def _workspace_or_session(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("session_id") is None and "session_id" in info.data:
            raise PydanticCustomError("invalid_params", "is required (unless sessionId is given)")
        return value

    @property
    def text(self) -> str:
        """The prompt as the kernel takes it."""
        return prompt_text(self.prompt)

    @property
    def images(self) -> tuple[ImagePart, ...]:
        """The prompt's images (checked: type by their bytes, size, count)."""
        return prompt_images(self.prompt)


# -- the other requests ------------------------------------------------------------------------------------------------


class RunIdParams(Params):
    run_id: NonEmptyStr


class RunTextParams(Params):
    run_id: NonEmptyStr
    text: NonBlankStr


class CancelParams(Params):
    run_id: NonEmptyStr
    stop_background: bool | None = Field(
        default=None,
        description="Also stop the session's background commands (default: they go on, listed by agent/background).",
    )


class BackgroundParams(Params):
    """`agent/background`: list a session's background commands; `stop` one (its id) or "all" first."""

    session_id: NonEmptyStr
    stop: NonEmptyStr | None = Field(default=None, description='A command id to stop first, or "all".')


class SessionsParams(Params):
    workspace: AbsolutePath
    query: str | None = Field(
        default=None,
        max_length=200,
        description="Only the sessions whose title, id or conversation (the text of its prompts and answers) holds "
        "every word of it, case-insensitively; absent or blank: all of them.",
    )


class SessionParams(Params):
    session_id: NonEmptyStr
    branch_only: bool | None = Field(default=False, description="Only the entries on the active branch.")


class ForkParams(Params):
    session_id: NonEmptyStr
    entry_id: NonEmptyStr


class RenameSessionParams(Params):
    session_id: NonEmptyStr
    title: str = Field(max_length=200, description="The session's title; '' goes back to the derived one.")


class DeleteSessionParams(Params):
    session_id: NonEmptyStr


class ToolOutputParams(Params):
    session_id: NonEmptyStr
    tool_call_id: NonEmptyStr = Field(description="The call's id (`toolCallId` of its events and result).")


class CompactParams(Params):
    session_id: NonEmptyStr
    instructions: str | None = Field(default=None, description="What the summary should focus on.")
    provider: NonEmptyStr | None = None
    model: NonEmptyStr | None = None


class RulesParams(Params):
    workspace: AbsolutePath


class RuleParams(Params):
    workspace: AbsolutePath
    rule: NonEmptyStr = Field(description="In the rule syntax, e.g. `bash(npm test *)` (protocol.md, Rules).")
    decision: Literal["allow", "deny"]
    scope: Literal["session", "project", "user"]
    session_id: NonEmptyStr | None = Field(
        default=None, description="Scope `session`: the session (required)."
    )


class CancelRequestParams(Params):
    """`$/cancelRequest`, both ways: the id of a request that is no longer wanted."""

    id: int | str


# -- the answer ------------------------------------------------------------------------------------------------------


class PermissionSelected(Params):
    outcome: Literal["selected"]
    option_id: str = Field(description="The optionId of an offered option.")
    new_text: str | None = Field(
        default=None,
        description="Approve with changes: the whole file the user wants instead of the proposal — only with an "
        "allow option, on a request whose toolCall has newText (edit and write).",
    )


class PermissionCancelled(Params):
    outcome: Literal["cancelled"]


class AcpPermissionResult(Params):
    """ACP's form of the answer, the outcome nested one level deeper."""

    outcome: PermissionSelected | PermissionCancelled


# The answer to `agent/permission`. Anything but a selected, offered option is a reject.
PermissionResult = TypeAliasType(
    "PermissionResult", PermissionSelected | PermissionCancelled | AcpPermissionResult
)


@functools.cache
def answer_adapter() -> TypeAdapter[PermissionSelected | PermissionCancelled | AcpPermissionResult]:
    """Built at the first answer, not at import: building it loads pydantic's plugin scan (importlib.metadata),
    which the daemon's start does not need."""
    return TypeAdapter(PermissionResult)


def chosen_option(answer: Any) -> str:
    """The optionId an `agent/permission` answer selects; anything but a clear selection is `reject_once`."""
    return chosen_answer(answer)[0]


def chosen_answer(answer: Any) -> tuple[str, str | None]:
    """The optionId an `agent/permission` answer selects and its `newText` (None: none); anything but a clear
    selection is `reject_once`."""
    try:
        outcome = answer_adapter().validate_python(answer)
    except ValidationError:
        return "reject_once", None
    if isinstance(outcome, AcpPermissionResult):
        outcome = outcome.outcome
    if isinstance(outcome, PermissionSelected):
        return outcome.option_id, outcome.new_text
    return "reject_once", None
