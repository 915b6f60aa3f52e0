"""Fixtures for tests that run tools or commands: a real workspace directory under tmp_path and a ToolContext
factory. Each test folder that needs them imports them in its conftest.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kgent.files.ops import LocalFileOps
from kgent.tools.base import ToolContext

MakeCtx = Callable[..., ToolContext]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def make_ctx(ws: Path, tmp_path: Path) -> MakeCtx:
    def make(**overrides: Any) -> ToolContext:
        fields: dict[str, Any] = {"workspace": ws, "fs": LocalFileOps(), "output_dir": tmp_path / "out"}
        fields.update(overrides)
        return ToolContext(**fields)

    return make


@pytest.fixture
def ctx(make_ctx: MakeCtx) -> ToolContext:
    return make_ctx()
