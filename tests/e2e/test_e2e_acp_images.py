"""`kgent acp` with images, driven by the ACP Python SDK's client: it advertises `promptCapabilities.image`, an
`image` block reaches the local model server in Anthropic's wire format, and a file that is not an image is refused
as invalid params; session/load replays the image with its text, from the session's blobs."""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp import schema as S
from kgent_host import STATE_DIR, daemon_env

from kgent.testing.images import png
from kgent.testing.model_server import ModelServer

AGENT = [sys.executable, "-m", "kgent", "acp"]
IMAGE = base64.b64encode(png(2, 3, (10, 200, 30))).decode()


class Client:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def request_permission(self, **kwargs: Any) -> S.RequestPermissionResponse:
        return S.RequestPermissionResponse(outcome=S.DeniedOutcome(outcome="cancelled"))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


@pytest.fixture(scope="module")
def model_server() -> Iterator[ModelServer]:
    with ModelServer([[{"text": "A green picture."}]]) as server:
        yield server


async def test_an_acp_image_block_reaches_the_model(tmp_path: Path, model_server: ModelServer) -> None:
    env = daemon_env(
        STATE_DIR,
        KGENT_PROVIDER="anthropic",
        KGENT_BASE_URL=model_server.anthropic_base_url,
        KGENT_MODEL="claude-sonnet-4-5",
        KGENT_API_KEY="test-key",
    )
    client = Client()
    async with spawn_agent_process(client, *AGENT, env=env) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        caps = init.agent_capabilities
        assert caps is not None and caps.prompt_capabilities is not None and caps.prompt_capabilities.image
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        image = S.ImageContentBlock(type="image", data=IMAGE, mime_type="image/png", uri="file:///tmp/g.png")
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("What colour?"), image])
        assert done.stop_reason == "end_turn"
        body = model_server.requests[-1].body
        user = body["messages"][0]["content"]
        assert user[0] == {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": IMAGE},
        }
        assert user[1]["text"] == "What colour?"
        with pytest.raises(RequestError) as refused:
            not_an_image = S.ImageContentBlock(
                type="image", data=base64.b64encode(b"plain text").decode(), mime_type="image/png"
            )
            await conn.prompt(session_id=session.session_id, prompt=[text_block("And this?"), not_an_image])
        assert refused.value.code == -32602 and "not a PNG, JPEG, WebP or GIF" in str(refused.value)
    # A new agent process (the client reopened the session): the prompt's text and its image, as they were sent.
    reopened = Client()
    async with spawn_agent_process(reopened, *AGENT, env=env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(tmp_path), session_id=session.session_id, mcp_servers=[])
    said = [u.content for u in reopened.updates if isinstance(u, S.UserMessageChunk)]
    assert [type(c).__name__ for c in said] == ["TextContentBlock", "ImageContentBlock"]
    assert said[0].text == "What colour?"
    assert (said[1].data, said[1].mime_type) == (IMAGE, "image/png")


async def test_a_model_outside_the_table_sees_images_when_the_person_says_so(
    tmp_path: Path, model_server: ModelServer
) -> None:
    image = S.ImageContentBlock(type="image", data=IMAGE, mime_type="image/png")
    for seeing in ("", "other-model, my-local-vlm"):
        model_server.reset()
        env = daemon_env(
            STATE_DIR,
            KGENT_PROVIDER="openai",
            KGENT_BASE_URL=model_server.openai_base_url,
            KGENT_MODEL="my-local-vlm",
            KGENT_API_KEY="test-key",
            KGENT_VISION_MODELS=seeing,
        )
        async with spawn_agent_process(Client(), *AGENT, env=env) as (conn, _):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            if (
                not seeing
            ):  # a model Kgent's table does not know: refused before any request, saying what to set
                with pytest.raises(RequestError) as refused:
                    await conn.prompt(
                        session_id=session.session_id, prompt=[text_block("What colour?"), image]
                    )
                assert "'my-local-vlm'" in str(refused.value) and "KGENT_VISION_MODELS" in str(refused.value)
                assert not model_server.requests
                continue
            done = await conn.prompt(
                session_id=session.session_id, prompt=[text_block("What colour?"), image]
            )
            assert done.stop_reason == "end_turn"
        [user] = [m for m in model_server.requests[-1].body["messages"] if m["role"] == "user"]
        assert [p["type"] for p in user["content"]] == ["text", "image_url"]
