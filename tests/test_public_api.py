"""The package root's public names are pinned: adding or removing one is a deliberate change."""

import kgent


def test_public_api_is_pinned() -> None:
    assert kgent.__all__ == [
        "AgentKernel",
        "AgentRun",
        "InMemorySessionStore",
        "KernelConfig",
        "KgentError",
        "ProviderConfig",
        "RunResult",
        "ScriptedProvider",
        "create_provider",
        "event_to_dict",
    ]
    for name in kgent.__all__:
        assert getattr(kgent, name) is not None
