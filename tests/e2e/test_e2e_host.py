"""The e2e tests' editor host (kgent_host.py) is pygls' JsonRPCClient: a JSON-RPC client written by others, so the
daemon's own JSON-RPC core (docs/adr/0006) is checked against one it did not shape. The host reads one private member
of pygls, checked here on the pinned range."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from pygls.client import JsonRPCClient
from pygls.protocol import JsonRPCProtocol, default_converter

PYGLS = importlib.metadata.version("pygls")
ROOT = Path(__file__).resolve().parents[2]


def test_the_installed_pygls_is_the_pinned_one() -> None:
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    [pin] = [Requirement(d) for d in dev if Requirement(d).name == "pygls"]
    assert pin.specifier.contains(PYGLS), (
        f"pygls {PYGLS} is installed but pyproject.toml pins {pin.specifier} for the e2e host: run tests/e2e with the "
        "new version before widening the pin."
    )


def test_the_host_reaches_the_daemon_process() -> None:
    """kgent_host.py reads the daemon subprocess (pid, stderr, wait) from `JsonRPCClient._server`, and the owning
    client from `JsonRPCProtocol._server`."""
    client = JsonRPCClient(protocol_cls=JsonRPCProtocol, converter_factory=default_converter)
    assert hasattr(client, "_server") and client._server is None, (
        f"pygls {PYGLS}: JsonRPCClient._server (the subprocess, None before start_io) moved; adapt kgent_host.py"
    )
    assert client.protocol._server is client, (
        f"pygls {PYGLS}: JsonRPCProtocol._server (the owning client) moved; adapt kgent_host.py"
    )
