"""Session blobs: stored once by sha256 beside the session file, read back, checked, deleted with the session; an
entry naming a blob by anything but a hash is refused on load."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from kgent.core.errors import SessionCorrupt, SessionError
from kgent.session.entries import new_entry
from kgent.session.jsonl import JsonlSessionStore
from kgent.session.memory import InMemorySessionStore
from kgent.testing.images import png


@pytest.mark.parametrize("kind", ["jsonl", "memory"])
async def test_a_blob_is_stored_once_read_back_and_deleted_with_its_session(
    tmp_path: Path, kind: str
) -> None:
    store = JsonlSessionStore(tmp_path) if kind == "jsonl" else InMemorySessionStore()
    info = await store.create(workspace=str(tmp_path))
    data = png(5, 5)
    sha = await store.put_blob(info.id, data)
    assert sha == hashlib.sha256(data).hexdigest()
    assert await store.put_blob(info.id, data) == sha and await store.get_blob(info.id, sha) == data
    with pytest.raises(SessionError) as missing:
        await store.get_blob(info.id, "0" * 64)
    assert missing.value.code == "blob_missing"
    if kind == "jsonl":
        blobs = store.locate(info.id).with_name(f"{info.id}.blobs")
        assert [p.name for p in blobs.iterdir()] == [sha]
    await store.delete(info.id)
    if kind == "jsonl":
        assert not blobs.exists()
    await store.aclose()


async def test_a_blob_name_that_is_not_a_hash_never_names_a_file(tmp_path: Path) -> None:
    store = JsonlSessionStore(tmp_path)
    info = await store.create(workspace=str(tmp_path))
    with pytest.raises(SessionError) as bad:
        await store.get_blob(info.id, "../../" + "a" * 58)
    assert bad.value.code == "invalid_blob"
    message = {
        "role": "user",
        "text": "x",
        "images": [{"mimeType": "image/png", "sha256": "../etc/passwd", "size": 1}],
    }
    path = store.locate(info.id)
    await store.aclose()
    with path.open("a") as f:
        f.write(json.dumps(new_entry("message", None, message=message).to_dict()) + "\n")
        f.write(json.dumps(new_entry("label", None, targetId="x", label="y").to_dict()) + "\n")
    with pytest.raises(SessionCorrupt) as refused:
        await JsonlSessionStore(tmp_path).load(info.id)
    assert "images" in refused.value.message
