"""Test doubles that use the real code paths: a local model server speaking both vendors' wire formats."""

from kgent.testing.model_server import Fault, ModelServer, RecordedRequest

__all__ = ["Fault", "ModelServer", "RecordedRequest"]
