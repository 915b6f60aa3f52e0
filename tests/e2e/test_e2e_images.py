"""Images through the daemon as a subprocess: an `image` block reaches the local model server in Anthropic's and in
OpenAI's wire format, is stored once beside the session and re-sent on resume; a model without vision and a file
that is not an image are refused clearly."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kgent_host import KgentHost
from pygls.exceptions import JsonRpcException

from kgent.testing.images import png
from kgent.testing.model_server import ModelServer

IMAGE = png(3, 2, (0, 128, 255))
B64 = base64.b64encode(IMAGE).decode()


@pytest.fixture(scope="module")
def model_server() -> Iterator[ModelServer]:
    with ModelServer([[{"text": "A small blue picture."}]]) as server:
        yield server


def prompt(text: str) -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": text},
        {"type": "image", "data": B64, "mimeType": "image/png", "uri": "shot.png"},
    ]


def anthropic_images(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] if m["role"] == "user" for b in m["content"] if b["type"] == "image"]


def openai_images(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        p
        for m in body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]


@pytest.mark.parametrize(("wire", "model"), [("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-4o")])
async def test_an_image_reaches_the_model_in_the_vendors_format_and_again_on_resume(
    spawn: Any, workspace: Path, tmp_path: Path, model_server: ModelServer, wire: str, model: str
) -> None:
    model_server.reset()
    state = tmp_path / "state"
    h: KgentHost = await spawn(
        KGENT_PROVIDER=wire,
        KGENT_BASE_URL=model_server.base_url(wire),
        KGENT_MODEL=model,
        state_dir=str(state),
    )
    _, end, events = await h.run_to_end(prompt=prompt("What is in this picture?"), workspace=str(workspace))
    assert end["status"] == "settled", end
    body = model_server.requests[-1].body
    if wire == "anthropic":
        assert anthropic_images(body) == [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}}
        ]
    else:
        assert openai_images(body) == [
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}}
        ]
        assert body["messages"][-1]["content"][0] == {"type": "text", "text": "What is in this picture?"}
    sid = end["sessionId"]
    session = await h.call("agent/session", {"sessionId": sid})
    user = next(e["message"] for e in session["entries"] if e["type"] == "message")
    assert user["images"] == [
        {
            "mimeType": "image/png",
            "sha256": user["images"][0]["sha256"],
            "size": len(IMAGE),
            "name": "shot.png",
        }
    ]
    # the same image again in a second run, then a resume without one: one blob, and the model sees it again
    await h.run_to_end(prompt=prompt("And now?"), sessionId=sid)
    _, resumed, _ = await h.run_to_end(prompt="Describe the first picture again.", sessionId=sid)
    assert resumed["status"] == "settled"
    last = model_server.requests[-1].body
    assert len(anthropic_images(last) if wire == "anthropic" else openai_images(last)) == 2
    session_file = next(state.rglob(f"{sid}.jsonl"))
    assert [p.name for p in session_file.with_name(f"{sid}.blobs").iterdir()] == [user["images"][0]["sha256"]]
    assert B64 not in session_file.read_text()
    await h.call("agent/deleteSession", {"sessionId": sid})
    assert not session_file.with_name(f"{sid}.blobs").exists()


async def test_a_model_without_vision_is_refused_before_any_request(
    spawn: Any, workspace: Path, model_server: ModelServer
) -> None:
    model_server.reset()
    h: KgentHost = await spawn(
        KGENT_PROVIDER="openai", KGENT_BASE_URL=model_server.openai_base_url, KGENT_MODEL="deepseek-chat"
    )
    with pytest.raises(JsonRpcException) as refused:
        await h.call("agent/run", {"prompt": prompt("What is this?"), "workspace": str(workspace)})
    assert refused.value.code == -32001 and refused.value.data == {"code": "config_error"}
    assert "'deepseek-chat'" in refused.value.message and "vision model" in refused.value.message
    assert not model_server.requests


@pytest.mark.parametrize(
    ("block", "says"),
    [
        (
            {"data": base64.b64encode(b"just text, not a picture").decode(), "mimeType": "image/png"},
            "its bytes",
        ),
        ({"data": B64, "mimeType": "image/svg+xml"}, "PNG, JPEG, WebP or GIF"),
        ({"data": "%%% not base64 %%%", "mimeType": "image/png"}, "not base64"),
        (
            {
                "data": base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * (5 << 20)).decode(),
                "mimeType": "image/png",
            },
            "5 MiB",
        ),
    ],
)
async def test_what_is_not_an_image_kgent_takes_is_refused(
    host: KgentHost, workspace: Path, block: dict[str, str], says: str
) -> None:
    with pytest.raises(JsonRpcException) as bad:
        await host.call(
            "agent/run",
            {
                "prompt": [{"type": "text", "text": "x"}, {"type": "image", **block}],
                "workspace": str(workspace),
            },
        )
    assert bad.value.code == -32602 and says in bad.value.message, bad.value.message


async def test_too_many_images_are_refused(host: KgentHost, workspace: Path) -> None:
    blocks = [{"type": "image", "data": B64, "mimeType": "image/png"}] * 9
    with pytest.raises(JsonRpcException) as bad:
        await host.call("agent/run", {"prompt": blocks, "workspace": str(workspace)})
    assert bad.value.code == -32602 and "at most 8 images per prompt" in bad.value.message
