"""The one KernelConfig-from-environment every front, the CLI and the SWE-bench runner use."""

from __future__ import annotations

import pytest

from kgent.core.errors import ConfigError
from kgent.service.assembly import build_kernel, kernel_config
from kgent.session.memory import InMemorySessionStore
from kgent.testing import ScriptedProvider

ENV = {
    "KGENT_PERMISSION_MODE": "auto",
    "KGENT_MAX_TURNS": "7",
    "KGENT_COST_LIMIT": "2.5",
    "KGENT_CONTEXT_WINDOW": "9000",
}


def test_the_environment_sets_the_kernel_config() -> None:
    config = kernel_config(ENV)
    assert (config.mode, config.max_turns, config.cost_limit, config.context_window) == ("auto", 7, 2.5, 9000)
    assert config.prices is not None and config.approval_timeout is None


def test_explicit_values_win_and_other_fields_pass_through() -> None:
    config = kernel_config(ENV, mode="full", turns=3, limit=1.0, approval_timeout=5.0, system_prompt="x")
    assert (config.mode, config.max_turns, config.cost_limit) == ("full", 3, 1.0)
    assert (config.approval_timeout, config.system_prompt, config.context_window) == (5.0, "x", 9000)


def test_a_bad_value_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="KGENT_MAX_TURNS"):
        kernel_config({"KGENT_MAX_TURNS": "many"})


def test_build_kernel_assembles_on_the_given_store() -> None:
    store = InMemorySessionStore()
    kernel = build_kernel(ScriptedProvider("hello"), kernel_config({}), store=store)
    assert kernel.store is store and kernel.config.mode == "ask"
