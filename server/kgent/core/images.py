"""Images in prompts: which kinds Kgent takes (told by their magic bytes, not by the declared type) and the limits.

Pure values; the fronts validate with them at the edge, the kernel and the session store only move bytes.
"""

from __future__ import annotations

import hashlib

from kgent.core.messages import ImagePart

# The kinds every vision API takes, by their first bytes.
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # one image, decoded (Anthropic's own limit per image)
MAX_IMAGES = 8  # per prompt: 8 images at the limit, base64-encoded, stay under the daemon's 64 MiB frame
# Tokens one image is counted as in the context budget (Anthropic bills about width·height/750, at most ~1600).
IMAGE_TOKENS = 1600


def sniff(data: bytes) -> str | None:
    """The image type `data` starts like (one of IMAGE_TYPES), or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_problem(data: bytes, declared: str | None = None) -> str | None:
    """Why `data` is not an image Kgent takes (a sentence for the client), or None when it is."""
    if declared is not None and declared.lower() not in IMAGE_TYPES:
        return f"has mimeType {declared[:60]!r}: images must be PNG, JPEG, WebP or GIF"
    if not data:
        return "has no image data"
    if len(data) > MAX_IMAGE_BYTES:
        return f"is {len(data)} bytes, over the limit of {MAX_IMAGE_BYTES} bytes (5 MiB) per image"
    if sniff(data) is None:
        return "is not a PNG, JPEG, WebP or GIF image (its bytes say otherwise)"
    return None


def image_part(data: bytes, name: str = "") -> ImagePart:
    """An image checked with `image_problem`, as a message part: its type from its bytes, its sha256."""
    kind = sniff(data)
    if kind is None:
        raise ValueError("not a PNG, JPEG, WebP or GIF image")
    return ImagePart(
        mime_type=kind, sha256=hashlib.sha256(data).hexdigest(), size=len(data), name=name, data=data
    )
