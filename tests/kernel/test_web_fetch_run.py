"""web_fetch in a run, over real HTTP to a loopback server: a private address is asked with its own reason and
fetched once approved; rejected, nothing is sent; in full mode (allowed) it is fetched unasked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import collect
from kgent.core.events import PermissionRequest, ToolUpdate
from webpages import Site, serve


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with serve() as s:
        yield s


def _script(url: str) -> list[list[dict[str, object]]]:
    return [[{"tool": "web_fetch", "args": {"url": url}}], [{"text": "Read it."}]]


async def _fetch(make_kernel, workspace: Path, url: str, mode: str, answer: str):  # type: ignore[no-untyped-def]
    kernel = make_kernel(_script(url), mode=mode)
    run = kernel.create_run("read the page", workspace=workspace)
    events = await collect(run, answer)
    [result] = [e for e in events if isinstance(e, ToolUpdate) and e.status in ("completed", "failed")]
    return [e for e in events if isinstance(e, PermissionRequest)], result


async def test_a_private_address_is_asked_with_its_own_reason_then_fetched(
    make_kernel, workspace: Path, site: Site
) -> None:
    asked, result = await _fetch(make_kernel, workspace, f"{site.base}/page", "auto", "allow_once")
    assert len(asked) == 1 and asked[0].tool_call.kind == "fetch"
    assert "a private network address (127.0.0.1): " in asked[0].reason
    assert asked[0].reason.endswith("private network addresses need your approval")
    assert not result.is_error and "# Fetched heading" in result.output


async def test_rejected_nothing_is_sent(make_kernel, workspace: Path, site: Site) -> None:
    before = len(site.requests)
    asked, result = await _fetch(make_kernel, workspace, f"{site.base}/text", "ask", "reject_once")
    assert len(asked) == 1 and result.is_error and result.output.startswith("permission_denied")
    assert len(site.requests) == before


async def test_full_mode_allows_it_unasked(make_kernel, workspace: Path, site: Site) -> None:
    asked, result = await _fetch(make_kernel, workspace, f"{site.base}/text", "full", "reject_once")
    assert asked == [] and not result.is_error and "plain text" in result.output
