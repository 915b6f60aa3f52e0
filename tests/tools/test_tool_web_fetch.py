"""web_fetch over real HTTP against a loopback server: Markdown from HTML, limits, redirects checked hop by hop,
private addresses only when approved, and never a credential."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from kgent.tools.base import ToolContext
from kgent.tools.web_fetch import MAX_BYTES, WebFetchTool
from webpages import Site, serve

MakeCtx = Callable[..., ToolContext]


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with serve() as s:
        yield s


async def test_html_becomes_markdown_without_scripts_or_styles(site: Site, make_ctx: MakeCtx) -> None:
    out = await WebFetchTool().run({"url": f"{site.base}/page"}, make_ctx(allow_private=True))
    assert not out.is_error, out.content
    assert (
        "# Fetched heading" in out.content and "[a link](/other)" in out.content and "**bold**" in out.content
    )
    assert "* first" in out.content
    assert (
        "no script text" not in out.content
        and "color:red" not in out.content
        and "Kgent page" not in out.content
    )
    assert out.details["status"] == 200 and out.details["contentType"] == "text/html"


async def test_a_private_address_is_refused_unless_the_call_was_approved_for_it(
    site: Site, make_ctx: MakeCtx
) -> None:
    before = len(site.requests)
    out = await WebFetchTool().run({"url": f"{site.base}/text"}, make_ctx())
    assert out.is_error and "private address (127.0.0.1)" in out.content
    assert len(site.requests) == before  # nothing was sent


async def test_redirects_are_followed_and_each_hop_is_checked(site: Site, make_ctx: MakeCtx) -> None:
    ctx = make_ctx(allow_private=True)
    followed = await WebFetchTool().run({"url": f"{site.base}/to-page"}, ctx)
    assert not followed.is_error and "# Fetched heading" in followed.content
    assert followed.details["redirects"] == [f"{site.base}/to-page"]
    to_file = await WebFetchTool().run({"url": f"{site.base}/to-file"}, ctx)
    assert to_file.is_error and "only http and https" in to_file.content
    elsewhere = await WebFetchTool().run({"url": f"{site.base}/to-localhost"}, ctx)
    assert elsewhere.is_error and "another private host (localhost" in elsewhere.content
    loop = await WebFetchTool().run({"url": f"{site.base}/loop"}, ctx)
    assert loop.is_error and "More than 5 redirects" in loop.content


async def test_size_and_time_are_bounded(site: Site, make_ctx: MakeCtx) -> None:
    ctx = make_ctx(allow_private=True)
    big = await WebFetchTool().run({"url": f"{site.base}/big"}, ctx)
    assert not big.is_error and big.details["bytes"] == MAX_BYTES
    assert "only the first 5.0MB were downloaded" in big.content and "truncation" in big.details
    slow = await WebFetchTool().run({"url": f"{site.base}/slow", "timeout": 0.5}, ctx)
    assert slow.is_error and "timed out" in slow.content.lower()


async def test_no_credential_is_ever_sent(
    site: Site, make_ctx: MakeCtx, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leave")
    monkeypatch.setenv("KGENT_API_KEY", "sk-must-not-leave")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # honoured, it would break the fetch
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    ctx = make_ctx(allow_private=True)
    out = await WebFetchTool().run({"url": f"{site.base}/headers"}, ctx)
    assert not out.is_error, out.content
    sent = {k.lower() for k in site.requests[-1][1]}
    assert "authorization" not in sent and "cookie" not in sent and "proxy-authorization" not in sent
    assert "sk-must-not-leave" not in out.content
    before = len(site.requests)
    userinfo = site.base.replace("http://", "http://user:secret@")
    refused = await WebFetchTool().run({"url": f"{userinfo}/headers"}, ctx)
    assert refused.is_error and "credentials" in refused.content and len(site.requests) == before


async def test_other_failures_are_error_results(site: Site, make_ctx: MakeCtx) -> None:
    ctx = make_ctx(allow_private=True)
    png = await WebFetchTool().run({"url": f"{site.base}/png"}, ctx)
    assert png.is_error and "image/png, not text" in png.content
    missing = await WebFetchTool().run({"url": f"{site.base}/missing"}, ctx)
    assert missing.is_error and "404" in missing.content and "# No such page" in missing.content
    text = await WebFetchTool().run({"url": f"{site.base}/text"}, ctx)
    assert not text.is_error and "plain text" in text.content
    for bad in ("ftp://example.org/x", "/relative", "http://"):
        out = await WebFetchTool().run({"url": bad}, ctx)
        assert out.is_error and out.content.startswith("Refused")
    closed = await WebFetchTool().run({"url": "http://127.0.0.1:9/"}, ctx)
    assert closed.is_error and "failed" in closed.content
