"""`image` prompt blocks at the edge: the four kinds told by their bytes, the limits, clear refusals."""

from __future__ import annotations

import base64
import hashlib

import pytest

import kgent.service.wire as W
from kgent.service.handshake import ParamsError
from kgent.testing.images import GIF, JPEG, WEBP, png


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def run(*blocks: dict[str, object]) -> W.RunParams:
    return W.RunParams.parse({"prompt": list(blocks), "workspace": "/w"})


@pytest.mark.parametrize(
    ("data", "kind"), [(png(), "image/png"), (JPEG, "image/jpeg"), (WEBP, "image/webp"), (GIF, "image/gif")]
)
def test_each_kind_is_taken_by_its_bytes(data: bytes, kind: str) -> None:
    p = run({"type": "text", "text": "see"}, {"type": "image", "data": b64(data), "mimeType": "image/png"})
    (image,) = p.images
    assert (image.mime_type, image.data, image.size) == (
        kind,
        data,
        len(data),
    )  # the bytes decide, not mimeType
    assert image.sha256 == hashlib.sha256(data).hexdigest() and p.text == "see"


def test_an_image_only_prompt_and_its_name_from_the_uri() -> None:
    p = run({"type": "image", "data": b64(png()), "mimeType": "image/png", "uri": "file:///home/me/shot.png"})
    assert p.text == "" and p.images[0].name == "shot.png"


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"data": b64(b"<svg/>"), "mimeType": "image/svg+xml"}, "has mimeType 'image/svg+xml'"),
        ({"data": b64(b"%PDF-1.7"), "mimeType": "image/png"}, "is not a PNG, JPEG, WebP or GIF image"),
        ({"data": "not base64!", "mimeType": "image/png"}, "has 'data' that is not base64"),
        ({"data": "", "mimeType": "image/png"}, "has no image data"),
        (
            {"data": b64(png() + b"\0" * (5 << 20)), "mimeType": "image/png"},
            "over the limit of 5242880 bytes",
        ),
        ({"mimeType": "image/png"}, "'prompt[0].data' is required"),
    ],
)
def test_what_is_refused_and_why(block: dict[str, str], message: str) -> None:
    with pytest.raises(ParamsError) as refused:
        run({"type": "image", **block})
    assert message in str(refused.value), str(refused.value)


def test_at_most_eight_images_a_prompt() -> None:
    image = {"type": "image", "data": b64(png()), "mimeType": "image/png"}
    assert len(run(*[image] * 8).images) == 8
    with pytest.raises(ParamsError) as refused:
        run(*[image] * 9)
    assert "has 9 images: at most 8 images per prompt" in str(refused.value)
