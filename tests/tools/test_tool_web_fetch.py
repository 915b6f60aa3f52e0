"""web_fetch over real HTTP against a loopback server: Markdown from HTML, limits, redirects checked hop by hop,
private addresses only when approved, and never a credential."""

from __future__ import annotations

import datetime
import socket
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


# -- DNS rebinding: the address checked is the address connected to ------------------------------------------------
NAME = "rebind.kgent.test"


class FlippingDns:
    """A resolver for NAME whose answer changes after the first look-up (what a rebinding DNS server does): the
    first answer is `first`, every later one `then`. Other names resolve as usual."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, first: str, then: str) -> None:
        self.answers = [first, then]
        self.lookups = 0
        self._real = socket.getaddrinfo
        monkeypatch.setattr(socket, "getaddrinfo", self)

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in (NAME, NAME.encode()):
            address = self.answers[min(self.lookups, 1)]
            self.lookups += 1
            return self._real(address, port, *args, **kwargs)
        return self._real(host, port, *args, **kwargs)


@pytest.fixture
def two_sites() -> Iterator[tuple[Site, Site]]:
    """The same port on 127.0.0.1 (the address a check is shown) and 127.0.0.2 (the one it rebinds to)."""
    with serve() as checked, serve("127.0.0.2", checked.server_address[1]) as rebound:
        yield checked, rebound


async def test_the_fetch_connects_to_the_address_it_checked_not_a_second_answer(
    two_sites: tuple[Site, Site], make_ctx: MakeCtx, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked, rebound = two_sites
    dns = FlippingDns(monkeypatch, "127.0.0.1", "127.0.0.2")
    port = checked.server_address[1]
    out = await WebFetchTool().run({"url": f"http://{NAME}:{port}/text"}, make_ctx(allow_private=True))
    assert not out.is_error, out.content
    assert "plain text" in out.content and out.details["url"] == f"http://{NAME}:{port}/text"
    assert (
        rebound.requests == [] and dns.lookups == 1
    )  # one look-up, and the connection went where it pointed
    assert checked.requests[-1][0] == "/text" and checked.requests[-1][1]["Host"] == f"{NAME}:{port}"


async def test_each_redirect_hop_is_resolved_once_and_connected_to_as_checked(
    two_sites: tuple[Site, Site], make_ctx: MakeCtx, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked, rebound = two_sites
    dns = FlippingDns(monkeypatch, "127.0.0.1", "127.0.0.1")
    port = checked.server_address[1]
    out = await WebFetchTool().run({"url": f"http://{NAME}:{port}/to-page"}, make_ctx(allow_private=True))
    assert not out.is_error and "# Fetched heading" in out.content, out.content
    assert [path for path, _ in checked.requests[-2:]] == ["/to-page", "/page"] and rebound.requests == []
    assert dns.lookups == 2  # one per hop


def _certificate(tmp_path: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A test authority and a certificate for NAME only (no IP in it): (server context, client context)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kgent test authority")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, NAME)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(NAME)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "leaf.pem", tmp_path / "leaf.key"
    cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_file, key_file)
    client = ssl.create_default_context(cadata=ca.public_bytes(serialization.Encoding.PEM).decode())
    return server, client


async def test_https_to_the_checked_address_keeps_sni_and_the_certificate_check_on_the_name(
    tmp_path: Path, make_ctx: MakeCtx, monkeypatch: pytest.MonkeyPatch
) -> None:
    server_tls, client_tls = _certificate(tmp_path)
    names: list[str | None] = []
    server_tls.sni_callback = lambda sock, name, ctx: names.append(name)  # type: ignore[assignment,misc]
    with serve(tls=server_tls) as site:
        FlippingDns(monkeypatch, "127.0.0.1", "127.0.0.2")
        tool = WebFetchTool()
        tool.verify = client_tls
        port = site.server_address[1]
        ctx = make_ctx(allow_private=True)
        out = await tool.run({"url": f"https://{NAME}:{port}/text"}, ctx)
        assert not out.is_error and "plain text" in out.content, out.content
        assert names == [NAME] and site.requests[-1][1]["Host"] == f"{NAME}:{port}"
        by_address = await tool.run({"url": f"https://127.0.0.1:{port}/text"}, ctx)
        assert by_address.is_error and "CERTIFICATE_VERIFY_FAILED" in by_address.content  # checks stay on
