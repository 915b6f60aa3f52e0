"""The one place a kernel is assembled from the environment (every front, the CLI and the SWE-bench runner):
KernelConfig from KGENT_* variables, explicit values (a run's flags, a front's settings) winning over them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kgent.config import context_overrides, cost_limit, max_turns, permission_mode, prices
from kgent.kernel import AgentKernel, KernelConfig
from kgent.kernel.config import parallel_subagents
from kgent.kernel.hooks import KernelHooks
from kgent.permissions import RuleBook
from kgent.providers.base import Provider
from kgent.providers.pricing import PriceTable
from kgent.session.store import SessionStore
from kgent.tools.base import CommandRunner, Tool


def kernel_config(
    env: Mapping[str, str],
    *,
    mode: str | None = None,
    turns: int | None = None,
    limit: float | None = None,
    price_table: PriceTable | None = None,
    **fields: Any,
) -> KernelConfig:
    """KernelConfig from `env` (KGENT_PERMISSION_MODE, KGENT_MAX_TURNS, KGENT_COST_LIMIT, KGENT_PRICES, the context
    sizes); `mode`, `turns`, `limit` and `price_table` win over them, `fields` set any other KernelConfig field
    (approval_timeout, system_prompt, …) as given. Raises ConfigError on a bad value."""
    values: dict[str, Any] = dict(context_overrides(env))
    values.update(
        mode=permission_mode(env, explicit=mode),
        max_turns=max_turns(env, explicit=turns),
        prices=price_table if price_table is not None else prices(env),
        cost_limit=cost_limit(env, explicit=limit),
        max_parallel_subagents=parallel_subagents(env),
    )
    values.update(fields)
    return KernelConfig(**values)


def build_kernel(
    provider: Provider,
    config: KernelConfig,
    *,
    store: SessionStore,
    hooks: KernelHooks | None = None,
    tools: Iterable[Tool] | None = None,
    runner: CommandRunner | None = None,
    rules: RuleBook | None = None,
) -> AgentKernel:
    """The kernel every front runs on: `provider` its default, `store` shared by the fronts; `runner` where shell
    commands run (default: on this machine, in the sandbox); `rules` the rule files and held session rules (default:
    the user's and the projects' files, trust from `kgent extensions --trust`)."""
    return AgentKernel(
        provider, tools=tools, store=store, config=config, hooks=hooks, runner=runner, rules=rules
    )
