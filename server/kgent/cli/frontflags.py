"""The flags the stdio fronts (`kgent serve`, `kgent acp`) share, and the environment they override: each front
reads its configuration from one mapping. Stdlib only: start-up time is the editor's wait."""

from __future__ import annotations

import argparse
import os

# flag → the environment variable it overrides
ENV_FLAGS = {
    "provider": "KGENT_PROVIDER",
    "model": "KGENT_MODEL",
    "base_url": "KGENT_BASE_URL",
    "mode": "KGENT_PERMISSION_MODE",
    "approval_timeout": "KGENT_APPROVAL_TIMEOUT",
}


def add_provider_flags(p: argparse.ArgumentParser, *, mode_help: str) -> None:
    """--provider, --model, --base-url, --mode (described by `mode_help`) and --log-level."""
    p.add_argument("--provider", help="openai | anthropic | scripted (env KGENT_PROVIDER)")
    p.add_argument("--model", help="model id; for scripted: a script name (env KGENT_MODEL)")
    p.add_argument("--base-url", dest="base_url", help="provider API base URL (env KGENT_BASE_URL)")
    p.add_argument(
        "--mode", help=f"{mode_help}: plan | ask | auto | full | risk_based (env KGENT_PERMISSION_MODE)"
    )
    p.add_argument(
        "--log-level", dest="log_level", help="DEBUG | INFO | WARNING | ERROR (env KGENT_LOG_LEVEL)"
    )


def env_with_flags(args: argparse.Namespace) -> dict[str, str]:
    """This process's environment with the given flags' values in their variables."""
    env = dict(os.environ)
    for attr, var in ENV_FLAGS.items():
        value = getattr(args, attr, None)
        if value is not None:
            env[var] = str(value)
    return env
