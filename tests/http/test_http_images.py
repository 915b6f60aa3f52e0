"""Images over HTTP: POST /api/runs takes the same `image` blocks as agent/run, within a body limit raised by
exactly what a prompt's images may add (other routes keep theirs)."""

from __future__ import annotations

import base64
import http.client
import os
from urllib.parse import urlsplit

import httpx

from conftest import run
from kgent.core.images import MAX_IMAGE_BYTES
from kgent.http.guard import IMAGES_BODY, MAX_BODY
from kgent.testing.http_server import HttpServer, read_events
from kgent.testing.images import png


def image(size: int) -> dict[str, str]:
    data = png() + os.urandom(size - len(png()))  # a PNG by its bytes, as big as asked
    return {
        "type": "image",
        "data": base64.b64encode(data).decode(),
        "mimeType": "image/png",
        "uri": "big.png",
    }


def test_a_run_with_images_bigger_than_the_usual_body_limit(client: httpx.Client) -> None:
    prompt = [
        {"type": "text", "text": "two screenshots"},
        image(MAX_IMAGE_BYTES),
        image(MAX_IMAGE_BYTES // 2),
    ]
    started = run(client, "hello", prompt)  # type: ignore[arg-type]
    events = [p["event"] for _, p in read_events(client, f"/api/runs/{started['runId']}/events")]
    user = next(e for e in events if e["type"] == "user_message")
    assert [i["size"] for i in user["images"]] == [MAX_IMAGE_BYTES, MAX_IMAGE_BYTES // 2]
    assert user["images"][0]["name"] == "big.png" and events[-1]["status"] == "settled"
    session = client.get(f"/api/sessions/{started['sessionId']}").json()
    stored = next(e["message"] for e in session["entries"] if e["type"] == "message")
    assert [i["sha256"] for i in stored["images"]] == [i["sha256"] for i in user["images"]]


def test_a_bad_image_is_invalid_params(client: httpx.Client) -> None:
    body = {
        "prompt": [{"type": "image", "data": base64.b64encode(b"GIF00").decode(), "mimeType": "image/gif"}]
    }
    body["workspace"] = client.get("/api/workspaces").json()["roots"][0]
    res = client.post("/api/runs", json=body)
    assert res.status_code == 400 and "not a PNG, JPEG, WebP or GIF" in res.json()["error"]["message"]


def test_the_runs_body_limit_is_bounded(server: HttpServer) -> None:
    """A body announced past the raised limit is refused from its header alone."""
    limit = MAX_BODY + IMAGES_BODY
    url = urlsplit(server.url)
    conn = http.client.HTTPConnection(url.hostname or "", url.port)
    conn.putrequest("POST", "/api/runs")
    conn.putheader("Authorization", f"Bearer {server.token}")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(limit + 1))
    conn.endheaders()
    res = conn.getresponse()
    body = res.read()
    assert res.status == 413 and b"body_too_large" in body and f"over {limit} bytes".encode() in body
    conn.close()
