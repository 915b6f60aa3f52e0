"""Fixtures: a real workspace under tmp_path and a ToolContext factory (tests/toolctx.py)."""

from toolctx import ctx, make_ctx, ws

__all__ = ["ctx", "make_ctx", "ws"]
