# Concept: the web_fetch tool — one http(s) page as text for the model (HTML as Markdown), bounded in size and time.
"""`WebFetchTool`: GET a URL with httpx, never with a credential (no auth headers, no proxies or .netrc from the
environment, no user:password@ URLs); redirects followed by hand, each hop checked again (http(s) only; a private
address only when the call was approved for that very host). Each hop's host is resolved once: the addresses checked
are the addresses connected to (the request goes to the IP, with the name in `Host` and in TLS's SNI and certificate
check), so a DNS answer that changes after the check (DNS rebinding) is never used. HTML becomes Markdown."""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from kgent.core.events import ToolKind
from kgent.tools.addresses import url_problem, vet
from kgent.tools.base import (
    CallDescription,
    FileChangePreview,
    ToolContext,
    ToolIntent,
    ToolOutput,
    error_output,
)
from kgent.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head

MAX_BYTES = 5 * 1024 * 1024  # of the body read off the wire; the rest is not downloaded
MAX_REDIRECTS = 5
DEFAULT_TIMEOUT = 30.0
USER_AGENT = "kgent-web-fetch/0.1"
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml", "+json", "+xml")
_DROPPED_TAGS = ("script", "style", "noscript", "template", "svg", "head", "iframe")


class WebFetchTool:
    """Fetch a web page."""

    name = "web_fetch"
    kind: ToolKind = "fetch"
    read_only = True
    intent = ToolIntent(effect="network", url_arg="url", verb="fetches")
    verify: ssl.SSLContext | bool = True  # certificates: the system's authorities (a test gives its own)
    description = (
        "Fetch an http(s) URL and return its content as text: HTML pages converted to Markdown (scripts and styles "
        f"dropped), text and JSON as they are. Reads at most {MAX_BYTES // (1024 * 1024)}MB; the result is cut to "
        f"its first {DEFAULT_MAX_BYTES // 1024}KB. Follows up to {MAX_REDIRECTS} redirects. No cookies, keys or "
        "credentials are sent. Times out after 30 seconds (set timeout in seconds to change it)."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The http or https URL to fetch"},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": "Timeout in seconds (default 30)",
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    }

    def describe(self, args: dict[str, Any], ctx: ToolContext) -> CallDescription:
        """'Fetch <url>'."""
        return CallDescription(title=f"Fetch {str(args.get('url') or '')[:200]}")

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> FileChangePreview | None:
        """A fetch changes no file."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Fetch, following redirects hop by hop; every failure is an error result."""
        url: str = args["url"].strip()  # checked against `parameters` (kgent.kernel.arguments)
        timeout = float(args.get("timeout") or DEFAULT_TIMEOUT)
        approved_host = urlsplit(url).hostname
        try:
            async with asyncio.timeout(timeout):
                return await self._fetch(url, approved_host, ctx, timeout)
        except TimeoutError:
            return error_output(f"Fetching {url} timed out after {timeout:g} seconds")

    async def _fetch(
        self, url: str, approved_host: str | None, ctx: ToolContext, seconds: float
    ) -> ToolOutput:
        # trust_env=False: no proxy, .netrc or certificate settings (nor credentials) from the environment.
        async with httpx.AsyncClient(
            trust_env=False,
            follow_redirects=False,
            timeout=seconds,
            headers={"User-Agent": USER_AGENT},
            verify=self.verify,
        ) as client:
            hops: list[str] = []
            while True:
                checked = await _check(url, approved_host, ctx)
                if isinstance(checked, str):
                    return error_output(checked, url=url, redirects=hops)
                try:
                    async with _stream(client, checked) as r:
                        if r.is_redirect and "location" in r.headers:
                            if len(hops) >= MAX_REDIRECTS:
                                return error_output(f"More than {MAX_REDIRECTS} redirects, last to {url}")
                            hops.append(url)
                            url = urljoin(url, r.headers["location"])
                            continue
                        body, cut = await _read(r)
                        return _result(url, r, body, cut, hops)
                except httpx.HTTPError as exc:
                    return error_output(f"Fetching {url} failed: {type(exc).__name__}: {exc}")


@dataclass(frozen=True, slots=True)
class _Hop:
    """A hop that passed the check: its URL and the addresses its host resolved to when it was checked."""

    url: str
    addresses: list[str]


async def _check(url: str, approved_host: str | None, ctx: ToolContext) -> _Hop | str:
    """The hop with the addresses it may connect to, or why it may not be fetched: a bad URL, a host that does not
    resolve, or a private address the call was not approved for."""
    problem = url_problem(url)
    if problem is not None:
        return f"Refused {url}: {problem}"
    host = httpx.URL(url).host  # as httpx will send it (IDNA), brackets stripped
    addresses, private = await asyncio.to_thread(vet, host)
    if not addresses:
        return f"Fetching {url} failed: {host} does not resolve to any address"
    if private is None:
        return _Hop(url, addresses)
    if not ctx.allow_private:
        return (
            f"Refused {url}: {host} resolves to a private address ({private}), and this call was approved for "
            "public addresses only; call web_fetch with that URL to ask the user"
        )
    if urlsplit(url).hostname != approved_host:
        return f"Refused {url}: a redirect to another private host ({host}, {private}) than the approved one"
    return _Hop(url, addresses)


class _stream:  # noqa: N801 - used as `async with _stream(...)`, like client.stream
    """GET the hop from the first of its checked addresses that accepts a connection: the URL's host replaced by
    the address, `Host` and (https) the TLS server name — SNI and the certificate check — kept on the name."""

    def __init__(self, client: httpx.AsyncClient, hop: _Hop) -> None:
        self.client, self.hop = client, hop
        self._response: httpx.Response | None = None

    async def __aenter__(self) -> httpx.Response:
        named = httpx.URL(self.hop.url)
        headers = {"Accept": "text/html, text/*;q=0.9, */*;q=0.5", "Host": named.netloc.decode("ascii")}
        extensions = {"sni_hostname": named.host} if named.scheme == "https" else {}
        for n, address in enumerate(self.hop.addresses):
            pinned = named.copy_with(host=address)
            request = self.client.build_request("GET", pinned, headers=headers, extensions=extensions)
            try:
                response = await self.client.send(request, stream=True)
            except httpx.ConnectError:
                if n == len(self.hop.addresses) - 1:
                    raise
                continue
            self._response = response
            return response
        raise httpx.ConnectError(f"no address of {named.host} to connect to")

    async def __aexit__(self, *exc: object) -> None:
        if self._response is not None:
            await self._response.aclose()


async def _read(response: httpx.Response) -> tuple[bytes, bool]:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_BYTES:
            return bytes(body[:MAX_BYTES]), True
    return bytes(body), False


def _result(url: str, response: httpx.Response, body: bytes, cut: bool, hops: list[str]) -> ToolOutput:
    ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
    details: dict[str, Any] = {
        "url": url,
        "status": response.status_code,
        "contentType": ctype,
        "bytes": len(body),
    }
    if hops:
        details["redirects"] = hops
    if ctype and not any(t in ctype for t in _TEXT_TYPES):
        return error_output(f"{url} is {ctype}, not text ({format_size(len(body))})", **details)
    if "html" in ctype or (
        not ctype and body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))
    ):
        text = html_to_markdown(body)
    else:
        text = body.decode(response.encoding or "utf-8", "replace")
    tr = truncate_head(text.strip())
    out = tr.content or "(empty page)"
    notes = []
    if cut:
        notes.append(f"only the first {format_size(MAX_BYTES)} were downloaded")
    if tr.truncated:
        notes.append(f"showing {tr.output_lines} of {tr.total_lines} lines ({format_size(tr.output_bytes)})")
        details["truncation"] = tr.as_dict()
    if notes:
        out += f"\n\n[{'; '.join(notes)}]"
    head = f"{url} → {response.status_code} {response.reason_phrase}".rstrip()
    if response.is_error:
        return ToolOutput(content=f"{head}\n\n{out}", is_error=True, details=details)
    return ToolOutput(content=f"{head}\n\n{out}", details=details)


def html_to_markdown(html: bytes) -> str:
    """An HTML document as Markdown: ATX headings, links kept, scripts, styles and the head dropped."""
    from bs4 import BeautifulSoup
    from markdownify import ATX, MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(list(_DROPPED_TAGS)):
        tag.decompose()
    markdown: str = MarkdownConverter(heading_style=ATX).convert_soup(soup)
    return "\n".join(line.rstrip() for line in markdown.splitlines())
