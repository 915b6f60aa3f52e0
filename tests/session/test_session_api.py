"""The public names of kgent.session and kgent.context are pinned (the CLI and the daemon import them)."""

import kgent.context
import kgent.session


def test_session_api_is_pinned() -> None:
    assert kgent.session.__all__ == [
        "InMemorySessionStore",
        "JsonlSessionStore",
        "SessionEntry",
        "SessionInfo",
        "SessionStore",
        "SessionTree",
        "sessions_root",
        "tree_to_dict",
        "workspace_key",
    ]
    assert all(getattr(kgent.session, name) is not None for name in kgent.session.__all__)


def test_context_api_is_pinned() -> None:
    assert kgent.context.__all__ == [
        "CompactionError",
        "CompactionResult",
        "CompactionSettings",
        "Compactor",
        "SummarizingProvider",
        "compact_session",
        "context_window",
        "estimate_context",
        "project",
    ]
    assert all(getattr(kgent.context, name) is not None for name in kgent.context.__all__)


def test_the_kernel_compacts_by_default() -> None:
    from kgent.kernel import AgentKernel
    from kgent.providers.scripted import ScriptedProvider

    assert isinstance(AgentKernel(ScriptedProvider("hello")).compactor, kgent.context.Compactor)
