"""kgent.acp.sdk: the SDK imported with its models built on first use behaves as the plain import does, and pydantic
is left as it was for every model declared afterwards. Each check runs in a fresh interpreter (the import is once per
process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

# Messages of a whole ACP exchange, both ways: each validated into the SDK's model and dumped as the SDK sends it.
PROBE = textwrap.dedent(
    """
    import json, sys
    if sys.argv[1] == "lazy":
        from kgent.acp.sdk import load
        assert load() is True
    from acp import schema as S
    cases = [
        ("InitializeRequest", {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}),
        ("NewSessionRequest", {"cwd": "/w", "mcpServers": [{"name": "m", "command": "x", "args": [], "env": []}]}),
        ("PromptRequest", {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"},
                           {"type": "image", "data": "AA==", "mimeType": "image/png"}]}),
        ("SessionNotification", {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk",
                                 "content": {"type": "text", "text": "x"}}}),
        ("SessionNotification", {"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "t",
                                 "title": "Read", "kind": "read", "status": "pending",
                                 "locations": [{"path": "/w/a", "line": 3}]}}),
        ("RequestPermissionRequest", {"sessionId": "s", "toolCall": {"toolCallId": "t"},
                                      "options": [{"optionId": "o", "name": "Allow", "kind": "allow_once"}]}),
        ("RequestPermissionResponse", {"outcome": {"outcome": "selected", "optionId": "o"}}),
        ("PromptResponse", {"stopReason": "end_turn"}),
    ]
    out = []
    for name, payload in cases:
        model = getattr(S, name).model_validate(payload)
        out.append(model.model_dump(mode="json", by_alias=True, exclude_none=True))
    try:
        S.PromptRequest.model_validate({"sessionId": "s"})
    except Exception as e:
        out.append(type(e).__name__ + ":" + str(e).splitlines()[0])
    print(json.dumps(out, sort_keys=True))
    """
)


def _python(tmp_path: Path, code: str, *args: str) -> str:
    # a file, not -c: pydantic reads attribute docstrings from the source
    script = tmp_path / f"probe{len(list(tmp_path.iterdir()))}.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_lazy_import_validates_and_dumps_as_the_plain_one(tmp_path: Path) -> None:
    lazy, plain = _python(tmp_path, PROBE, "lazy"), _python(tmp_path, PROBE, "plain")
    assert json.loads(lazy) == json.loads(plain)
    assert "ValidationError" in json.loads(lazy)[-1]


def test_the_sdks_models_wait_for_their_first_use_and_pydantic_is_restored_after(tmp_path: Path) -> None:
    report = _python(
        tmp_path,
        textwrap.dedent(
            """
            import json
            from pydantic import BaseModel, ConfigDict
            from pydantic._internal import _config, _fields
            extract = _fields.extract_docstrings_from_cls
            from kgent.acp.sdk import load
            first, again = load(), load()
            from acp import schema as S
            models = [m for m in vars(S).values() if isinstance(m, type) and issubclass(m, BaseModel)]
            waiting = sum(not m.__pydantic_complete__ for m in models)

            class Later(BaseModel):
                model_config = ConfigDict(use_attribute_docstrings=True)
                x: int = 0
                \"\"\"the docstring\"\"\"

            print(json.dumps({
                "first": first, "again": again, "models": len(models), "waiting": waiting,
                "defer_default": _config.config_defaults["defer_build"],
                "extract_restored": _fields.extract_docstrings_from_cls is extract,
                "later_built": Later.__pydantic_complete__,
                "later_doc": Later.model_fields["x"].description,
            }))
            """
        ),
    )
    got = json.loads(report)
    # the fast path is on (it fails here, not silently, if a pydantic release moves the internals it uses)
    assert got["first"] is True and got["again"] is False
    assert got["models"] > 200 and got["waiting"] > 200, got
    # and nothing of it outlives the import: a model declared afterwards is built at once, with its docstrings
    assert got["defer_default"] is False and got["extract_restored"] is True
    assert got["later_built"] is True and got["later_doc"] == "the docstring"


GC_PROBE = textwrap.dedent(
    """
    import gc, json, sys
    from kgent.core import loading
    if sys.argv[1] == "process":
        loading.start_process()  # as `kgent acp` does
    collections = []
    gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
    from kgent.acp.main import load_agent
    collections.clear()
    load_agent()
    print(json.dumps({"collections": len(collections), "enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}))
    """
)


def test_kgent_acp_loads_the_sdk_and_the_agent_without_collecting_then_collects_again(tmp_path: Path) -> None:
    """`kgent acp`'s load (the SDK and the kernel, ~0.3 s of the first prompt's wait) runs with the collector paused
    (kgent.core.loading: ~30 ms less); afterwards collection is on and what loaded is frozen out of it. An importer of
    the library (no `kgent` process) keeps the collector as it was."""
    process = json.loads(_python(tmp_path, GC_PROBE, "process"))
    assert process == {"collections": 0, "enabled": True, "frozen": process["frozen"]}, process
    assert process["frozen"] > 50_000, process
    library = json.loads(_python(tmp_path, GC_PROBE, "library"))
    assert library["enabled"] is True and library["frozen"] == 0 and library["collections"] > 0, library
