"""The extension API's version (stdlib only, so the daemon's handshake can name it without loading the API)."""

API_VERSION = "1.1"  # major.minor: a minor adds to the API, a major changes it


def empty_listing() -> dict[str, object]:
    """What `initialize` and `kgent extensions` show when nothing is configured."""
    return {"apiVersion": API_VERSION, "project": None, "extensions": [], "mcpServers": [], "errors": []}
