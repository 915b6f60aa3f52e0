"""Language servers Kgent runs itself for diagnostics, where the host has none: their configuration
(`[language_servers.NAME]`), the LSP client over stdio, and the pool of one session's servers."""
