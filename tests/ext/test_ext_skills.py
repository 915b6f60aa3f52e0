"""Extensions ship skills: `api.skills(dir)` lists them to the model beside the project's and the user's, a read of
one is not asked, and a bad directory fails the extension's load naming it."""

from __future__ import annotations

from pathlib import Path

from ext_support import run_script, user_extension

from kgent.core.events import PermissionRequest, ToolUpdate
from kgent.ext.host import Extensions
from kgent.providers.scripted import ScriptedProvider

SHIPPED = """
from pathlib import Path

def register(api):
    api.require("1.1")
    api.skills(Path(__file__).parent / "shipped-skills")
"""


async def test_an_extensions_skills_reach_the_system_prompt_and_read_unasked(
    tmp_path: Path, workspace: Path, config_dir: Path
) -> None:
    skill = config_dir / "shipped-skills" / "changelog"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: changelog\ndescription: Keep CHANGELOG.md.\n---\nCHANGELOG STEPS\n"
    )
    user_extension(config_dir, SHIPPED, name="shipper")
    ext = Extensions()
    assert ext.listing(workspace)["extensions"][0]["registered"] == [
        f"skills:{config_dir / 'shipped-skills'}"
    ]
    turns = [[{"tool": "read", "args": {"path": str(skill / "SKILL.md")}}], [{"text": "done"}]]
    events, result, kernel = await run_script(tmp_path, workspace, turns, ext, mode="ask")
    assert result.status == "settled"
    assert not [e for e in events if isinstance(e, PermissionRequest)]
    [done] = [e for e in events if isinstance(e, ToolUpdate) and e.status == "completed"]
    assert "CHANGELOG STEPS" in (done.output or "")
    assert isinstance(kernel.provider, ScriptedProvider)
    system = kernel.provider.requests[0].system_prompt
    assert f"- changelog: Keep CHANGELOG.md. ({skill / 'SKILL.md'})" in system
    await ext.aclose()


async def test_a_relative_skills_dir_fails_the_load_naming_the_extension(
    config_dir: Path, workspace: Path
) -> None:
    user_extension(config_dir, "def register(api):\n    api.skills('skills')\n", name="lazy")
    [record] = Extensions().listing(workspace)["extensions"]
    assert (
        record["status"] == "failed" and "extension 'lazy': skills: give an absolute path" in record["error"]
    )
