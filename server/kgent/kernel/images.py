"""Images in a run: which models see them, their bytes read back from the session's blobs before a request, and
what a model without vision gets instead (a note, so a session with images stays usable on any model)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from kgent.core.errors import ConfigError
from kgent.core.messages import Message, UserMessage
from kgent.providers.base import Provider
from kgent.providers.pricing import PriceTable


def sees_images(provider: Provider, table: PriceTable) -> bool:
    """A provider that says (`vision: bool`, as the scripted one does) is believed; otherwise the model table."""
    declared = getattr(provider, "vision", None)
    return declared if isinstance(declared, bool) else table.sees_images(provider.model)


# Named in the refusal when the table has them: one model for each wire format.
EXAMPLES = (("claude-sonnet-4-5", "anthropic"), ("gpt-4o", "openai"))


def no_vision_error(provider: Provider, table: PriceTable) -> ConfigError:
    """The refusal of images for a model without vision: which model, and how to pick one that sees them."""
    some = [f"{m} (provider {p})" for m, p in EXAMPLES if table.sees_images(m)]
    others = len(table.vision_models())
    hint = f"e.g. {' or '.join(some)}; {others} models in the table take images" if some else "none is known"
    return ConfigError(
        f"model {provider.model!r} ({provider.name}) does not take images: pick a vision model for this run "
        f"(the run's provider and model, or KGENT_PROVIDER and KGENT_MODEL; {hint}), or, if it does see images, "
        "name it in KGENT_VISION_MODELS"
    )


def has_images(history: Sequence[Message]) -> bool:
    """Whether any message of the history carries an image (one plain scan)."""
    for m in history:
        if isinstance(m, UserMessage) and m.images:
            return True
    return False


class ImageScan:
    """`has_images`, asked before every request of a run: only the messages added since the last answer are scanned
    (the history grows by a few messages a turn; a whole scan each time is quadratic in a long run). Another history
    (compacted, rewound, images filled in: the loop replaces its list), or one whose scanned part is no longer there,
    is scanned whole again."""

    def __init__(self) -> None:
        # the list scanned last (its messages are immutable; the loop appends to it or replaces it)
        self._of: Sequence[Message] | None = None
        self._clean = 0  # how many of its leading messages were found without images …
        self._tail: Message | None = None  # … ending with this one

    def __call__(self, history: Sequence[Message]) -> bool:
        n = self._clean
        if not (history is self._of and n and n <= len(history) and history[n - 1] is self._tail):
            n = 0
        if has_images(history[n:]):
            self._of, self._clean, self._tail = None, 0, None
            return True
        self._of, self._clean = history, len(history)
        self._tail = history[-1] if history else None
        return False


async def with_image_data(
    history: Sequence[Message], fetch: Callable[[str], Awaitable[bytes]]
) -> list[Message] | None:
    """The history with every image's bytes filled in (`fetch(sha256)`), or None when nothing was missing."""
    if not any(isinstance(m, UserMessage) and any(not i.data for i in m.images) for m in history):
        return None
    out: list[Message] = []
    for m in history:
        if isinstance(m, UserMessage) and any(not i.data for i in m.images):
            images = [i if i.data else i.with_data(await fetch(i.sha256)) for i in m.images]
            m = UserMessage(text=m.text, images=tuple(images))
        out.append(m)
    return out


def without_images(history: Sequence[Message], model: str) -> tuple[Message, ...]:
    """The history for a model that sees no images: each image replaced by a note saying it was left out."""
    out: list[Message] = []
    for m in history:
        if isinstance(m, UserMessage) and m.images:
            note = "\n".join(
                f"[an image ({i.mime_type}) was attached here; model {model} cannot see images]"
                for i in m.images
            )
            m = UserMessage(text=f"{m.text}\n\n{note}" if m.text else note)
        out.append(m)
    return tuple(out)
