"""Images through the kernel: stored once by hash beside the session, re-sent on resume, refused for a model that
sees none, left out (with a note) when a session with images moves to such a model."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from kgent.core.errors import ConfigError
from kgent.core.events import UserInput
from kgent.core.images import image_part
from kgent.core.messages import AssistantMessage, UserMessage
from kgent.core.redact import remember_secret
from kgent.kernel import AgentKernel, KernelConfig
from kgent.kernel.images import ImageScan, has_images
from kgent.providers.pricing import PriceTable
from kgent.providers.scripted import ScriptedProvider
from kgent.session.jsonl import JsonlSessionStore
from kgent.testing.images import png

ANSWER = [[{"text": "I see it."}]]


class BlindProvider(ScriptedProvider):
    """The scripted provider, as a model that sees no images."""

    vision = False


async def settle(run):
    events = [e async for e in run]
    return await run.result(), events


def kernel(root: Path, provider: ScriptedProvider | None = None) -> tuple[AgentKernel, ScriptedProvider]:
    provider = provider or ScriptedProvider(ANSWER)
    return AgentKernel(provider, store=JsonlSessionStore(root), config=KernelConfig(mode="full")), provider


async def test_an_image_reaches_the_provider_and_is_stored_once_outside_the_jsonl(
    tmp_path, workspace
) -> None:
    image = image_part(png(3, 3), "shot.png")
    k, provider = kernel(tmp_path / "s")
    first, events = await settle(k.create_run("What is this?", images=[image], workspace=workspace))
    assert first.status == "settled"
    sent = provider.requests[0].messages[-1]
    assert isinstance(sent, UserMessage) and sent.images[0].data == png(3, 3)
    assert sent.images[0].mime_type == "image/png" and sent.images[0].name == "shot.png"
    assert [e.entry_id for e in events if isinstance(e, UserInput)]
    second, _ = await settle(
        k.create_run("And again", images=[image], workspace=workspace, session_id=first.session_id)
    )
    await k.aclose()
    session_file = next((tmp_path / "s").rglob(f"{first.session_id}.jsonl"))
    blobs = sorted(p.name for p in session_file.with_name(f"{first.session_id}.blobs").iterdir())
    assert blobs == [image.sha256]  # two runs, the same image: one blob
    text = session_file.read_text()
    assert base64.b64encode(png(3, 3)).decode() not in text and text.count(image.sha256) == 2


async def test_a_resumed_session_resends_its_images_after_a_restart(tmp_path, workspace) -> None:
    image = image_part(png(4, 4, (0, 0, 255)))
    k1, _ = kernel(tmp_path / "s")
    first, _ = await settle(k1.create_run("Look", images=[image], workspace=workspace))
    await k1.aclose()
    k2, provider = kernel(tmp_path / "s")
    resumed, _ = await settle(k2.create_run("What colour was it?", session_id=first.session_id))
    await k2.aclose()
    assert resumed.status == "settled"
    earlier = provider.requests[0].messages[0]
    assert isinstance(earlier, UserMessage) and earlier.images[0].data == png(4, 4, (0, 0, 255))


async def test_a_missing_blob_fails_the_resumed_run_clearly(tmp_path, workspace) -> None:
    image = image_part(png())
    k1, _ = kernel(tmp_path / "s")
    first, _ = await settle(k1.create_run("Look", images=[image], workspace=workspace))
    await k1.aclose()
    blob = next((tmp_path / "s").rglob(image.sha256))
    blob.write_bytes(b"tampered")
    k2, provider = kernel(tmp_path / "s")
    resumed, _ = await settle(k2.create_run("Again", session_id=first.session_id))
    await k2.aclose()
    assert resumed.status == "failed" and resumed.error is not None
    assert resumed.error["code"] == "blob_missing" and not provider.requests


async def test_a_model_without_vision_refuses_images_before_any_request(tmp_path, workspace) -> None:
    blind = BlindProvider(ANSWER, model="deepseek-chat")
    k, _ = kernel(tmp_path / "s", blind)
    with pytest.raises(ConfigError) as refused:
        k.create_run("What is this?", images=[image_part(png())], workspace=workspace)
    assert "'deepseek-chat'" in refused.value.message and "vision" in refused.value.message
    assert "claude-sonnet-4-5" in refused.value.message and not blind.requests
    await k.aclose()


async def test_the_model_table_decides_when_the_provider_does_not_say(tmp_path, workspace) -> None:
    class Undeclared(ScriptedProvider):
        vision = None  # type: ignore[assignment]

    table = PriceTable.from_json({"models": {"my-llava": {"vision": True}}}, "test")
    for model, ok in (("my-llava", True), ("my-llava-20250101", True), ("other", False)):
        k = AgentKernel(Undeclared(ANSWER, model=model), config=KernelConfig(mode="full", prices=table))
        if ok:
            result, _ = await settle(k.create_run("x", images=[image_part(png())], workspace=workspace))
            assert result.status == "settled"
        else:
            with pytest.raises(ConfigError):
                k.create_run("x", images=[image_part(png())], workspace=workspace)
        await k.aclose()


async def test_a_session_with_images_resumed_on_a_blind_model_gets_a_note(tmp_path, workspace) -> None:
    k1, _ = kernel(tmp_path / "s")
    first, _ = await settle(k1.create_run("Look", images=[image_part(png())], workspace=workspace))
    await k1.aclose()
    blind = BlindProvider(ANSWER, model="deepseek-chat")
    k2, _ = kernel(tmp_path / "s", blind)
    resumed, _ = await settle(k2.create_run("Go on", session_id=first.session_id))
    await k2.aclose()
    assert resumed.status == "settled"
    earlier = blind.requests[0].messages[0]
    assert isinstance(earlier, UserMessage) and not earlier.images
    assert earlier.text.startswith("Look\n\n[an image (image/png) was attached here; model deepseek-chat")


async def test_redaction_leaves_images_whole_and_keys_out_of_the_session(tmp_path, workspace) -> None:
    key = "sk-images-" + "k3y" * 14
    remember_secret(key)
    data = (
        png() + key.encode()
    )  # bytes that happen to hold a key's text are the user's image, sent as they are
    k, provider = kernel(tmp_path / "s")
    first, _ = await settle(
        k.create_run(f"Look (my key is {key})", images=[image_part(data)], workspace=workspace)
    )
    await k.aclose()
    assert provider.requests[0].messages[-1].images[0].data == data
    blob = next((tmp_path / "s").rglob(f"{first.session_id}.blobs/*"))
    assert blob.read_bytes() == data
    assert base64.b64encode(data).decode() not in next((tmp_path / "s").rglob("*.jsonl")).read_text()


def test_the_image_scan_before_each_request_reads_only_what_was_added() -> None:
    class Counted(list):  # counts the messages the scan reads
        reads = 0

        def __getitem__(self, key):  # type: ignore[no-untyped-def]
            got = super().__getitem__(key)
            Counted.reads += len(got) if isinstance(key, slice) else 1
            return got

    scan = ImageScan()
    history = Counted(UserMessage(text=f"m{i}") for i in range(100))
    assert not scan(history) and Counted.reads == 101  # the whole history once (and the tail it remembers)
    for i in range(50):  # a long run: each turn adds two messages
        history.extend([AssistantMessage(text="a"), UserMessage(text=f"u{i}")])
        assert not scan(history)
    assert Counted.reads < 101 + 50 * 5  # a few reads a turn, not the whole history again
    history.append(UserMessage(text="look", images=(image_part(png()),)))
    assert scan(history) and scan(history)  # found, and found again
    assert not scan(Counted(history[:10]))  # another history (compacted, rewound): scanned whole again
    replaced = Counted(history[:-1])
    replaced[5] = UserMessage(text="with", images=(image_part(png()),))
    assert scan(replaced)  # the remembered tail is not there: scanned whole again
    assert has_images(replaced) and not has_images(history[:10])
