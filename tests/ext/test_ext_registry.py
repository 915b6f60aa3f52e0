"""Registrations are checked when made: unique names, valid schemas, known hooks; a failing extension adds nothing
and its record names it. Project extensions need trust; providers resolve through the registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from ext_support import user_extension

from kgent.core.errors import ConfigError, ExtensionError
from kgent.ext.host import Extensions
from kgent.ext.registry import Registry
from kgent.ext.trust import set_trusted
from kgent.providers.base import ProviderConfig
from kgent.tools import CalculatorTool


def _calc(name: str, **changes: object) -> CalculatorTool:
    tool = CalculatorTool()
    tool.name = name
    for key, value in changes.items():
        setattr(tool, key, value)
    return tool


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        (_calc("calculator"), "taken by a built-in tool"),
        (_calc("mcp__x__y"), "reserved for MCP tools"),
        (_calc("has space"), "1-64 letters"),
        (
            _calc("calc2", parameters={"type": "object", "properties": {"a": {"type": "nope"}}}),
            "invalid JSON Schema",
        ),
        (_calc("calc2", parameters={"type": "array"}), "JSON Schema of an object"),
        (_calc("calc2", intent=None), "intent must be a kgent.tools.base.ToolIntent"),
        (_calc("calc2", kind="weird"), "its kind must be one of"),
    ],
)
def test_bad_tool_registrations_are_refused_naming_the_extension(tool: object, message: str) -> None:
    with pytest.raises(ExtensionError, match="extension 'x'") as info:
        Registry().add_tool("x", tool)
    assert message in info.value.message


def test_names_are_unique_across_extensions_and_hooks_are_checked() -> None:
    parent = Registry()
    parent.add_tool("a", _calc("calc2"))
    child = Registry(parent=parent)
    with pytest.raises(ExtensionError, match="taken by extension 'a'"):
        child.add_tool("b", _calc("calc2"))
    with pytest.raises(ExtensionError, match="unknown hook"):
        child.add_hook("b", "before_everything", lambda ctx, x: None)
    with pytest.raises(ExtensionError, match="must not be async"):

        async def on_event(ctx: object, event: object) -> None: ...

        child.add_hook("b", "on_event", on_event)
    with pytest.raises(ExtensionError, match="3 positional arguments"):
        child.add_hook("b", "after_tool_call", lambda ctx, call: None)
    with pytest.raises(ExtensionError, match="built-in provider"):
        child.add_provider("b", "openai", lambda config: None)
    with pytest.raises(ExtensionError, match="namespaced"):
        child.add_entry_kind("b", "message", {"type": "object"})


def test_a_failing_extension_registers_nothing_and_says_why(config_dir: Path) -> None:
    user_extension(
        config_dir,
        "from kgent.tools import CalculatorTool\n"
        "def register(api):\n    t = CalculatorTool(); t.name = 'half'; api.tool(t)\n    raise OSError('disk')\n",
        name="half",
    )
    ext = Extensions()
    [record] = ext.records
    assert record.status == "failed"
    assert record.error == f"extension 'half' ({config_dir / 'half.py'}) failed to load: OSError: disk"
    assert ext.registry.tools == {}
    assert ext.listing(None)["extensions"][0]["error"] == record.error


def test_project_extensions_and_servers_load_only_when_trusted(tmp_path: Path, workspace: Path) -> None:
    (workspace / ".kgent").mkdir()
    (workspace / ".kgent" / "mine.py").write_text(
        "from kgent.tools import CalculatorTool\ndef register(api):\n    t = CalculatorTool(); t.name = 'mine'; api.tool(t)\n"
    )
    (workspace / ".kgent" / "config.toml").write_text('[extensions]\nload = [".kgent/mine.py"]\n')
    (workspace / ".mcp.json").write_text('{"mcpServers": {"srv": {"command": "true"}}}')
    listing = Extensions().listing(workspace)
    assert listing["project"] == {"root": str(workspace), "trusted": False, "needsTrust": True}
    assert [e["status"] for e in listing["extensions"]] == ["untrusted"]
    assert [s["status"] for s in listing["mcpServers"]] == ["untrusted"]
    assert "mine" not in {t.tool.name for t in Extensions().project(workspace).registry.all_tools()}
    set_trusted(workspace, True)
    ext = Extensions()
    assert [t.tool.name for t in ext.project(workspace).registry.all_tools()] == ["mine"]
    assert [s.name for s in ext.project(workspace).mcp_servers] == ["srv"]
    assert {
        t.tool.name for t in Extensions(trust_project=False).project(workspace).registry.all_tools()
    } == set()


def test_a_bad_config_file_is_a_clear_error_not_a_crash(workspace: Path) -> None:
    (workspace / ".mcp.json").write_text(
        '{"mcpServers": {"s": {"type": "sse", "url": "http://127.0.0.1:1"}}}'
    )
    listing = Extensions().listing(workspace)
    assert listing["errors"] == [
        f"{workspace / '.mcp.json'}: MCP server 's': type 'sse' is not supported (use stdio or http)"
    ]


def test_providers_resolve_through_the_registry(config_dir: Path) -> None:
    user_extension(
        config_dir,
        "from kgent.providers.scripted import ScriptedProvider\n"
        "def register(api):\n"
        "    api.provider('echo', lambda config: ScriptedProvider(config.model), default_model='hello')\n"
        "    api.provider('broken', lambda config: object())\n",
        name="provs",
    )
    ext = Extensions()
    assert ext.provider_names() == ["anthropic", "broken", "echo", "openai", "scripted"]
    deepseek = ext.registry.provider("deepseek")  # the built-ins are in the registry, aliases too
    assert deepseek is not None and deepseek.name == "openai"
    provider = ext.create_provider(ProviderConfig(provider="echo", model=""))
    assert provider.model == "hello"
    with pytest.raises(
        ExtensionError, match="extension 'provs': provider 'broken': the factory returned a object"
    ):
        ext.create_provider(ProviderConfig(provider="broken"))
    with pytest.raises(ConfigError, match="unknown provider 'nope'"):
        ext.create_provider(ProviderConfig(provider="nope"))
