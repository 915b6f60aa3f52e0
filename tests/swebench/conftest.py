"""The `fixture` fixture: SWE-bench instances over small local repos (swebench_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from swebench_fixtures import Fixture, make_fixture


@pytest.fixture
def fixture(tmp_path: Path) -> Fixture:
    return make_fixture(tmp_path)
