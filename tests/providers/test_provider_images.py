"""Images in each vendor's wire format, and what the rest of the context does with them (budget, summaries, the
model table's vision)."""

from __future__ import annotations

import base64

from kgent.context.summary import serialize
from kgent.context.tokens import estimate_message
from kgent.core.images import IMAGE_TOKENS, image_part
from kgent.core.messages import UserMessage, message_from_dict, message_to_dict
from kgent.providers.anthropic import message_blocks
from kgent.providers.openai import message_to_wire
from kgent.providers.pricing import PriceTable, builtin_prices
from kgent.testing.images import JPEG, png

IMAGE = image_part(png(2, 2), "a.png")
B64 = base64.b64encode(png(2, 2)).decode()


def test_anthropic_gets_base64_image_blocks_before_the_text() -> None:
    role, blocks = message_blocks(UserMessage(text="what?", images=(IMAGE,)))
    assert role == "user" and blocks == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}},
        {"type": "text", "text": "what?"},
    ]
    assert message_blocks(UserMessage(text="", images=(IMAGE,)))[1] == blocks[:1]


def test_openai_gets_data_url_parts_and_text_only_messages_stay_strings() -> None:
    jpeg = image_part(JPEG)
    assert message_to_wire(UserMessage(text="what?", images=(IMAGE, jpeg))) == {
        "role": "user",
        "content": [
            {"type": "text", "text": "what?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}},
            {
                "type": "image_url",
                "image_url": {"url": f"data:image/jpeg;base64,{base64.b64encode(JPEG).decode()}"},
            },
        ],
    }
    assert message_to_wire(UserMessage(text="hi")) == {"role": "user", "content": "hi"}


def test_sessions_keep_a_reference_never_the_bytes_and_text_only_messages_keep_their_form() -> None:
    d = message_to_dict(UserMessage(text="x", images=(IMAGE,)))
    assert d == {
        "role": "user",
        "text": "x",
        "images": [{"mimeType": "image/png", "sha256": IMAGE.sha256, "size": IMAGE.size, "name": "a.png"}],
    }
    back = message_from_dict(d)
    assert (
        isinstance(back, UserMessage)
        and back.images[0].data == b""
        and back == UserMessage(text="x", images=(IMAGE,))
    )
    assert message_to_dict(UserMessage(text="x")) == {"role": "user", "text": "x"}


def test_an_image_counts_in_the_budget_and_a_summary_names_it_without_its_bytes() -> None:
    assert (
        estimate_message(UserMessage(text="x", images=(IMAGE,)))
        == estimate_message(UserMessage(text="x")) + IMAGE_TOKENS
    )
    text = serialize([UserMessage(text="look", images=(IMAGE,))])
    assert text == f"[User]: look [image image/png, {IMAGE.size} bytes]" and B64 not in text


def test_the_model_table_says_which_models_see_images() -> None:
    table = builtin_prices()
    assert table.sees_images("claude-sonnet-4-5-20250929") and table.sees_images("gpt-4o")
    assert not table.sees_images("deepseek-chat") and not table.sees_images("unknown-model")
    mine = table.updated(
        PriceTable.from_json({"models": {"llava": {"vision": True}, "gpt-4o": {"vision": False}}}, "f")
    )
    assert mine.sees_images("llava") and not mine.sees_images("gpt-4o") and mine.price("llava") is None
