"""What ACP's session requests answer beside the session: its modes and its config options (mode, model, how long an
'always' answer lasts), as plain data in ACP's JSON spelling, without the SDK.

kgent.acp.handshake answers an early `session/new` with it while the SDK (whose pydantic schema takes 0.5–0.9 s to
import) is still loading; KgentAgent validates the same data into the SDK's models for every other answer, so both
paths say the same (tests/acp/test_acp_handshake.py holds them to the SDK's models)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from kgent.config import DEFAULTS, permission_mode, provider_config
from kgent.core.modes import MODE_DESCRIPTIONS, MODE_NAMES, MODES

Lasting = Literal["session", "project"]
LASTING: tuple[tuple[Lasting, str, str], ...] = (
    ("session", "This session", "An 'always' answer makes a rule for this session only."),
    (
        "project",
        "This project",
        "An 'always' answer makes a rule for this project (its .kgent/config.toml, or your own file for it while "
        "the project is not trusted), kept for the next sessions.",
    ),
)


def modes() -> list[dict[str, str]]:
    """ACP's session modes: Kgent's permission modes, each with its name and what it does."""
    return [{"id": mode, "name": MODE_NAMES[mode], "description": MODE_DESCRIPTIONS[mode]} for mode in MODES]


def default_mode(env: Mapping[str, str]) -> str:
    """A new session's mode: KGENT_PERMISSION_MODE when it names one, else `ask`."""
    mode = permission_mode(env)
    return mode if mode in MODES else "ask"


def models(env: Mapping[str, str]) -> list[str]:
    """The models a session may pick: the scripts for the scripted provider; else the configured model and the
    provider's default (Kgent keeps no catalogue of a vendor's models; KGENT_MODEL names any)."""
    config = provider_config(env)
    if config.provider == "scripted":
        from kgent.providers.scripted import builtin_scripts

        return builtin_scripts()
    default = DEFAULTS.get(config.provider, ("", ""))[1]
    return list(dict.fromkeys(m for m in (config.model, default) if m))


def mode_state(current: str) -> dict[str, Any]:
    """`modes` of a session answer (clients without config options use it)."""
    return {"currentModeId": current, "availableModes": modes()}


def config_options(
    env: Mapping[str, str], mode: str, model: str | None, lasting: Lasting
) -> list[dict[str, Any]]:
    """`configOptions` of a session answer: its mode, its model (None: the environment's) and how long its 'always'
    answers last."""
    return [
        {
            "type": "select",
            "id": "mode",
            "name": "Mode",
            "category": "mode",
            "currentValue": mode,
            "options": [
                {"value": m["id"], "name": m["name"], "description": m["description"]} for m in modes()
            ],
        },
        {
            "type": "select",
            "id": "model",
            "name": "Model",
            "category": "model",
            "currentValue": model or provider_config(env).model,
            "options": [{"value": m, "name": m} for m in models(env)],
        },
        {
            "type": "select",
            "id": "lasting",
            "name": "Always answers last",
            "description": "How long an 'Always allow' or 'Always reject' answer to a permission request lasts.",
            "currentValue": lasting,
            "options": [
                {"value": value, "name": name, "description": description}
                for value, name, description in LASTING
            ],
        },
    ]
