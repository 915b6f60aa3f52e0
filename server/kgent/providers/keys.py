"""Which environment variables may hold the key for a provider at a URL: a vendor's key goes to its host only."""

from __future__ import annotations

from urllib.parse import urlsplit


def _host_is(base_url: str, domain: str) -> bool:
    host = (urlsplit(base_url if "//" in base_url else f"//{base_url}").hostname or "").lower()
    return host == domain or host.endswith("." + domain)


def key_env_names(provider: str, base_url: str) -> tuple[str, ...]:
    """The environment variables that may hold the key for this provider and URL, in lookup order.

    A vendor's key goes only to that vendor's host: any other server (a proxy, Ollama, vLLM) gets KGENT_API_KEY
    alone, so a DEEPSEEK_API_KEY in the environment never leaks to a URL someone pointed Kgent at."""
    if provider == "anthropic":
        return (
            ("KGENT_API_KEY", "ANTHROPIC_API_KEY")
            if _host_is(base_url, "anthropic.com")
            else ("KGENT_API_KEY",)
        )
    if provider == "openai":
        if _host_is(base_url, "deepseek.com"):
            return ("KGENT_API_KEY", "DEEPSEEK_API_KEY")
        if _host_is(base_url, "openai.com"):
            return ("KGENT_API_KEY", "OPENAI_API_KEY")
        return ("KGENT_API_KEY",)
    return ()
