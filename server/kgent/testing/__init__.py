"""Test doubles that use the real code paths, shipped for tests, demos, benchmarks and the editor shims:
a local model server speaking both vendors' wire formats, and the scripted provider (no network at all)."""

from kgent.providers.scripted import ScriptedProvider, builtin_scripts, load_script
from kgent.testing.faults import Fault
from kgent.testing.model_server import ModelServer, RecordedRequest

__all__ = ["Fault", "ModelServer", "RecordedRequest", "ScriptedProvider", "builtin_scripts", "load_script"]
