"""The HTTP side every real provider shares: one keep-alive client, retries with backoff, errors a user can
act on.

Foreign failures are translated here, where they enter: an HTTP status or an httpx exception becomes a
`ProviderError` whose `retryable` decides whether `HTTPProvider.stream` tries again. The key is never put into
a message: status errors name the environment variable to set and the URL (without its userinfo), and every
ProviderError text — streamed or not — is redacted where it is created (kgent.core.redact, via KgentError).
"""

from __future__ import annotations

import json
import random
import re
import ssl
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgent.core.errors import ProviderError
from kgent.core.redact import redact, redact_url
from kgent.providers.base import CONTEXT_OVERFLOW, ProviderConfig
from kgent.providers.keys import key_env_names

if TYPE_CHECKING:
    import httpx

# httpx and its stack (httpcore, h11, h2, anyio: ~50 ms of a first run's imports) load with the first client
# (`new_client`, called by a provider's first request or its warm-up), not with the provider modules: a run can start
# and say so (run_start) while they load.

USER_AGENT = "kgent/0.1"
MAX_ERROR_BODY = 64 * 1024

# Messages that mean "the prompt does not fit" across vendors and local servers (OpenAI, DeepSeek, Anthropic,
# vLLM, llama.cpp, Ollama).
OVERFLOW_PATTERN = re.compile(
    r"context[_ ]length[_ ]exceeded|prompt is too long|maximum context length|exceeds? the (?:available )?context"
    r"|context window|reduce the length of the messages|too many tokens|token limit exceeded|prompt too long"
    r"|input is too long|request_too_large",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Exponential backoff with jitter: base, 2·base, 4·base … (capped), each scaled by 1 ± `jitter`.
    A server's Retry-After replaces the computed delay, capped at `max_retry_after` seconds."""

    base_delay: float = 2.0
    max_delay: float = 30.0
    max_retry_after: float = 60.0
    jitter: float = 0.2

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after))
        delay: float = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return delay * random.uniform(1 - self.jitter, 1 + self.jitter)


def new_client(config: ProviderConfig) -> httpx.AsyncClient:
    """The provider's one client: keep-alive pool, and no request may hang (connect, read, write and pool timeouts)."""
    import httpx

    from kgent.providers.transport import AsyncioTransport

    timeout = httpx.Timeout(
        connect=config.connect_timeout,
        read=config.read_timeout,
        write=config.read_timeout,
        pool=config.connect_timeout,
    )
    headers = {"user-agent": USER_AGENT}
    # A plain-HTTP endpoint (a local model server) never uses TLS: a context that trusts nothing, instead of
    # loading the certificate store (~20 ms of every start). Anything sent over TLS with it fails closed.
    tls = _trust_nothing() if config.base_url.startswith("http://") else httpx.create_ssl_context()
    if _env_proxies():  # httpx mounts the environment's proxies only on its own transports
        return httpx.AsyncClient(timeout=timeout, headers=headers, verify=tls)
    return httpx.AsyncClient(timeout=timeout, headers=headers, transport=AsyncioTransport(tls))


def _env_proxies() -> bool:
    """Whether the environment names a proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, any case), as httpx reads it."""
    from urllib.request import getproxies

    return any(scheme in getproxies() for scheme in ("http", "https", "all"))


def _trust_nothing() -> ssl.SSLContext:
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies certificates and host names; knows no CA


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """Seconds from `retry-after-ms`, or `Retry-After` (seconds or an HTTP date); None when absent or unreadable."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def server_message(body: bytes) -> str:
    """The human part of an error body: OpenAI/Anthropic `{"error": {"message"}}`, Ollama `{"error": "..."}`, text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        return text[:500]
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            message = err.get("message") or err.get("msg")
            kind = err.get("type") or err.get("code")
            if message:
                return (
                    f"{kind}: {message}"
                    if isinstance(kind, str) and kind not in str(message)
                    else str(message)
                )
        elif isinstance(err, str):
            return err
        if isinstance(data.get("message"), str):
            return str(data["message"])
    return text[:500]


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """What an error message may say about where a request went (never the key, nor the URL's userinfo)."""

    provider: str
    url: str
    model: str
    has_key: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "url", redact_url(self.url))

    def key_hint(self) -> str:
        names = key_env_names(self.provider, self.url) or ("KGENT_API_KEY",)
        return " or ".join(names)


def status_error(
    status: int, body: bytes, headers: httpx.Headers, where: Endpoint, key: str | None
) -> ProviderError:
    """Classify an HTTP error status; 408/409/429 (unless out of quota) and 5xx are retryable."""
    detail = redact(server_message(body), key)
    said = f": {detail}" if detail else ""
    at = f"{where.url} (model {where.model})"
    retry_after = parse_retry_after(headers)

    def fail(code: str, text: str, retryable: bool = False) -> ProviderError:
        return ProviderError(text, code=code, retryable=retryable, retry_after=retry_after, status=status)

    if status in (400, 413, 422) and OVERFLOW_PATTERN.search(detail):
        return fail(
            CONTEXT_OVERFLOW,
            f"The conversation is too long for the model's context window (HTTP {status} from {at}){said}",
        )
    if status == 401:
        how = "the API key was rejected" if where.has_key else "no API key is set"
        return fail(
            "authentication_failed",
            f"Authentication failed (HTTP 401 from {at}): {how}; set {where.key_hint()} to a valid key{said}",
        )
    if status == 402 or (
        status == 429 and re.search(r"insufficient|quota|balance|billing", detail, re.IGNORECASE)
    ):
        return fail(
            "insufficient_balance",
            f"The account behind the API key is out of credit or quota (HTTP {status} from {at}){said}",
        )
    if status == 403:
        return fail(
            "forbidden",
            f"Access denied (HTTP 403 from {at}): check that the key in {where.key_hint()} may use this model{said}",
        )
    if status == 404:
        return fail(
            "not_found",
            f"Not found (HTTP 404 from {at}): check the base URL (--base-url or KGENT_BASE_URL) "
            f"and the model name (--model or KGENT_MODEL){said}",
        )
    if status in (408, 504):
        return fail("provider_timeout", f"The model server timed out (HTTP {status} from {at}){said}", True)
    if status == 429:
        return fail("rate_limited", f"Rate limited (HTTP 429 from {at}){said}", True)
    if status == 409 or status >= 500:
        code = "overloaded" if status == 529 or "overloaded" in detail.lower() else "provider_unavailable"
        return fail(code, f"The model server is unavailable (HTTP {status} from {at}){said}", True)
    return fail("invalid_request", f"The model server rejected the request (HTTP {status} from {at}){said}")


def transport_error(exc: httpx.HTTPError, where: Endpoint) -> ProviderError:
    """Classify an httpx exception. Every transport failure is retryable; `HTTPProvider` retries only before output."""
    import httpx

    reason = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return ProviderError(f"Invalid base URL {where.url!r}: {reason}", code="config_error")
    if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
        return ProviderError(
            f"Timed out connecting to {where.url}: {reason}", code="connection_error", retryable=True
        )
    if isinstance(exc, httpx.ConnectError):
        return ProviderError(
            f"Could not connect to {where.url}: {reason}", code="connection_error", retryable=True
        )
    if isinstance(exc, httpx.ReadTimeout):
        return ProviderError(
            f"The model server at {where.url} sent nothing for too long (read timeout)",
            code="provider_timeout",
            retryable=True,
        )
    if isinstance(exc, httpx.TimeoutException):
        return ProviderError(
            f"Timed out talking to {where.url}: {reason}", code="provider_timeout", retryable=True
        )
    if isinstance(exc, httpx.TransportError):
        return ProviderError(
            f"The connection to {where.url} broke: {reason}", code="connection_error", retryable=True
        )
    return ProviderError(f"HTTP failure talking to {where.url}: {reason}", code="provider_error")
