"""Whether a URL leaves for the public internet or reaches a private one (loopback, private ranges, link-local such
as cloud metadata at 169.254.169.254, …): the host is resolved and every address it resolves to is checked. `vet`
gives the addresses it checked too, so a fetch connects to exactly those (no second look-up: no DNS rebinding)."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

SCHEMES = ("http", "https")


def url_problem(url: str) -> str | None:
    """Why `url` cannot be fetched at all (scheme, no host, credentials in it), or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if parts.scheme.lower() not in SCHEMES:
        return f"only http and https URLs are fetched, not {parts.scheme or 'a relative URL'}:"
    if not parts.hostname:
        return "the URL has no host"
    if parts.username is not None or parts.password is not None:
        return "the URL carries credentials (user:password@); Kgent never sends credentials"
    return None


def _unsafe(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
        or not address.is_global
    )


def resolve(host: str) -> list[str]:
    """The addresses `host` resolves to (an IP literal: itself); [] when it does not resolve."""
    try:
        return [str(ipaddress.ip_address(host.strip("[]")))]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def vet(host: str) -> tuple[list[str], str | None]:
    """One look-up of `host`: the addresses it resolves to, and the first private (non-global) one among them (None
    when all are public). A name such as `localhost` resolves to loopback and is private."""
    addresses = resolve(host)
    for text in addresses:
        try:
            address = ipaddress.ip_address(text.split("%", 1)[0])
        except ValueError:
            return addresses, text  # not an address we can judge: treated as private
        if _unsafe(address):
            return addresses, text
    return addresses, None


def private_address(host: str) -> str | None:
    """The first private (non-global) address `host` resolves to, or None when all are public (or none resolve:
    the fetch then fails on its own)."""
    return vet(host)[1]


def private_target(url: str) -> str | None:
    """For a fetchable URL: the private address its host resolves to, else None."""
    host = urlsplit(url).hostname
    return private_address(host) if host else None
