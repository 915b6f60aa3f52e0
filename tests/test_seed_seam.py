"""Seed 001's public seam, as the README shows it: the snippet is the seed's, word for word except for the names
(`coding_agent` → `kgent`, `FakeProvider` → `ScriptedProvider`), and it runs."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from kgent import AgentKernel, RunResult, ScriptedProvider
from kgent.core.events import MessageDelta, RunEnd, RunStart
from kgent.providers.scripted import builtin_scripts

ROOT = Path(__file__).resolve().parent.parent

# Seed 001's snippet (shared/seeds/001_*.txt), indented as Python needs, with Kgent's names.
SEED = """from coding_agent import AgentKernel, FakeProvider


async def observe_run() -> None:
    kernel = AgentKernel(FakeProvider.streamed_run())
    run = kernel.create_run("Demonstrate an observable run.")
    async for event in run:
        ...  # consume AgentSessionEvent values
    result = await run.result()
"""


def _readme_snippet() -> str:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    found = [b for b in blocks if "from kgent import AgentKernel, ScriptedProvider" in b]
    assert len(found) == 1, "the README shows the seam once, in a ```python block"
    return found[0]


def test_the_readme_shows_the_seeds_snippet_with_kgents_names() -> None:
    renamed = SEED.replace("coding_agent", "kgent").replace("FakeProvider", "ScriptedProvider")
    assert _readme_snippet() == renamed


def test_the_snippet_runs_in_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(_readme_snippet(), "README.md", "exec"), namespace)
    asyncio.run(namespace["observe_run"]())  # type: ignore[operator]


def test_create_run_defaults_the_workspace_to_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    async def observe() -> tuple[list[object], RunResult]:
        kernel = AgentKernel(ScriptedProvider.streamed_run())
        run = kernel.create_run("Demonstrate an observable run.")
        events = [event async for event in run]
        result = await run.result()
        await kernel.aclose()
        return events, result

    events, result = asyncio.run(observe())
    assert isinstance(events[0], RunStart) and events[0].workspace == str(tmp_path.resolve())
    assert isinstance(events[-1], RunEnd) and events[-1].result == result
    assert result.status == "settled"
    assert "".join(e.delta for e in events if isinstance(e, MessageDelta) and e.kind == "text") == result.text
    assert result.text.startswith("Hello from the scripted provider")


def test_every_builtin_script_is_a_class_method() -> None:
    for name in builtin_scripts():
        provider = getattr(ScriptedProvider, name.replace("-", "_"))()
        assert isinstance(provider, ScriptedProvider)
        assert provider.model == name and provider.script
    named = {m for m in vars(ScriptedProvider) if isinstance(vars(ScriptedProvider)[m], classmethod)}
    assert named == {name.replace("-", "_") for name in builtin_scripts()}
