"""Extensions through the kernel: an extension's tool, hooks that deny or fail, entries of its own kind — each failure
an error of its one call that names the extension, never the run's."""

from __future__ import annotations

from pathlib import Path

import pytest
from ext_support import run_script, user_extension

from kgent.core.events import RunEnd, ToolUpdate
from kgent.ext.host import Extensions

EXT = """
from kgent.tools.base import CallDescription, ToolIntent, ToolOutput

class Shout:
    name = "shout"
    description = "Upper-cases its text."
    parameters = {"type": "object", "properties": {"text": {"type": "string", "maxLength": 20}}, "required": ["text"]}
    kind = "think"
    read_only = True
    intent = ToolIntent(effect="think")
    def describe(self, args, ctx):
        return CallDescription(title="shout")
    async def preview(self, args, ctx):
        return None
    async def run(self, args, ctx):
        if args["text"] == "boom":
            raise RuntimeError("kaboom")
        if args["text"] == "wrong":
            return "not a ToolOutput"
        return ToolOutput(content=args["text"].upper())

def register(api):
    api.require("1.0")
    api.tool(Shout())
    api.entry_kind("audit.note", {"type": "object", "properties": {"calls": {"type": "integer"}}, "required": ["calls"]})

    @api.hook("before_tool_call")
    def gate(ctx, call):
        if call.arguments.get("text") == "secret":
            return "no secrets"
        if call.arguments.get("text") == "hookfail":
            raise ValueError("the gate broke")
        return None

    @api.hook("after_tool_call")
    async def tag(ctx, call, result):
        if result.content == "AFTERFAIL":
            raise KeyError("tagging")
        return None

    @api.hook("on_run_end")
    def note(ctx, result):
        return [("audit.note", {"calls": result.turns})]
"""


def _outputs(events: list[object]) -> list[str]:
    return [e.output for e in events if isinstance(e, ToolUpdate) and e.status != "in_progress"]  # type: ignore[misc]


async def test_extension_tool_and_hooks_each_failure_names_the_extension(
    tmp_path: Path, workspace: Path, config_dir: Path
) -> None:
    user_extension(config_dir, EXT)
    ext = Extensions()
    assert [r.status for r in ext.records] == ["loaded"]
    texts = ["hi", "secret", "hookfail", "boom", "wrong", "afterfail", "x" * 30]
    turns = [[{"tool": "shout", "args": {"text": t}}] for t in texts] + [[{"text": "done"}]]
    events, result, kernel = await run_script(tmp_path, workspace, turns, ext)
    assert result.status == "settled"
    out = _outputs(events)
    assert out[0] == "HI"
    assert out[1] == "permission_denied: extension 'audit' denied this call: no secrets"
    assert (
        out[2]
        == "hook_error: extension 'audit': its before_tool_call hook failed: ValueError: the gate broke"
    )
    assert out[3] == "tool_error: extension 'audit', tool 'shout' failed: RuntimeError: kaboom"
    assert out[4] == "extension_error: extension 'audit', tool 'shout' returned a str, not a ToolOutput"
    assert out[5].startswith("hook_error: extension 'audit': its after_tool_call hook failed: KeyError")
    # checked by the kernel's one validator, before any hook sees the call (as for built-in tools)
    assert out[6] == f"invalid_arguments: argument 'text': '{'x' * 30}' is too long"
    tree = await kernel.store.load(result.session_id)
    notes = [e.data for e in tree.entries.values() if e.type == "audit.note"]
    assert notes == [{"calls": len(turns)}]


async def test_a_failing_before_model_request_hook_fails_the_turn_naming_it(
    tmp_path: Path, workspace: Path, config_dir: Path
) -> None:
    user_extension(
        config_dir,
        "def register(api):\n    api.hook('before_model_request', lambda ctx, req: 1 / 0)\n",
        name="broken",
    )
    events, result, _ = await run_script(tmp_path, workspace, [[{"text": "never"}]], Extensions())
    assert result.status == "failed"
    assert result.error == {
        "code": "hook_error",
        "message": "extension 'broken': its before_model_request hook failed: ZeroDivisionError: division by zero",
    }
    assert isinstance(events[-1], RunEnd)


async def test_an_entry_that_does_not_fit_its_kind_is_not_stored(
    tmp_path: Path, workspace: Path, config_dir: Path, caplog: object
) -> None:
    user_extension(
        config_dir,
        "def register(api):\n    api.entry_kind('bad.note', {'type': 'object', 'required': ['n']})\n"
        "    api.hook('on_run_end', lambda ctx, result: [('bad.note', {'m': 1})])\n",
        name="bad",
    )
    _, result, kernel = await run_script(tmp_path, workspace, [[{"text": "ok"}]], Extensions())
    assert result.status == "settled"
    tree = await kernel.store.load(result.session_id)
    assert not [e for e in tree.entries.values() if e.type == "bad.note"]
    assert "extension 'bad': its on_run_end hook returned a 'bad.note' entry that does not fit" in str(
        caplog.text  # type: ignore[attr-defined]
    )


async def test_a_tool_that_changes_its_schema_after_registering_is_refused(
    tmp_path: Path, workspace: Path, config_dir: Path
) -> None:
    user_extension(config_dir, EXT + "\n_T = None\n")
    ext = Extensions()
    entry = ext.registry.tools["shout"]
    entry.tool.parameters = {"type": "object"}  # what a misbehaving tool might do at run time
    events, _, _ = await run_script(
        tmp_path, workspace, [[{"tool": "shout", "args": {"text": "hi"}}], [{"text": "x"}]], ext
    )
    assert _outputs(events) == [
        "extension_error: extension 'audit', tool 'shout': its name or parameters changed after it was registered"
    ]


async def test_on_event_sees_every_event_and_a_failing_one_is_logged_not_fatal(
    tmp_path: Path, workspace: Path, config_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    user_extension(
        config_dir,
        "SEEN = []\n"
        "def register(api):\n"
        "    api.hook('on_event', lambda ctx, event: SEEN.append(event.type))\n"
        "    def fail(ctx, event):\n"
        "        if event.type == 'message_end':\n"
        "            raise RuntimeError('the event sink is down')\n"
        "    api.hook('on_event', fail)\n",
        name="watch",
    )
    ext = Extensions()
    events, result, _ = await run_script(tmp_path, workspace, [[{"text": "hello"}]], ext)
    assert result.status == "settled"
    seen = ext.registry.hooks[0].fn.__globals__["SEEN"]
    assert seen == [type(e).type for e in events if not isinstance(e, RunEnd)]  # run_end: see on_run_end
    assert "extension 'watch': its on_event hook failed: RuntimeError: the event sink is down" in caplog.text
