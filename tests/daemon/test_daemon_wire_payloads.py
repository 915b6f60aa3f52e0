"""What the daemon sends fits its wire models: each kernel event's wire form (event_to_dict) is exactly its event
model, the initialize answer of the boot path is InitializeResult, session shapes are the session layer's."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any

import pytest

from helpers import conforms
from kgent.core import events as K
from kgent.core.messages import AssistantMessage, ToolCall, Usage, message_to_dict
from kgent.kernel.cost import context_use, session_usage, usage_to_wire
from kgent.providers.pricing import PriceTable
from kgent.service import handshake as H
from kgent.service import wire as W
from kgent.service.wire import events as E
from kgent.service.wire import results as R
from kgent.session.entries import SessionEntry, SessionInfo, SessionTree, tree_to_dict


def wire_keys(model: type[W.Payload]) -> set[str]:
    return {f.alias or name for name, f in model.model_fields.items()}


def test_one_event_model_per_kernel_event_with_its_fields() -> None:
    by_type = {typing.get_args(m.model_fields["type"].annotation)[0]: m for m in E.EVENTS}
    assert list(by_type) == list(K.EVENT_TYPES)
    for cls in typing.get_args(K.Event):
        if (
            cls is K.SubRunEvent
        ):  # not an event on the wire: the daemon sends its inner event as the sub-run's
            continue
        assert wire_keys(by_type[cls.type]) == {"type", *K.wire_keys(cls)}, cls.type


def literals(tp: Any) -> set[Any]:
    """The values of a Literal type, through type aliases, Optional and Annotated; empty for other types."""
    tp = getattr(tp, "__value__", tp)
    if typing.get_origin(tp) is typing.Literal:
        return set(typing.get_args(tp))
    if typing.get_origin(tp) in (typing.Union, types.UnionType, typing.Annotated):
        return set().union(*(literals(a) for a in typing.get_args(tp)))
    return set()


def test_enumerations_are_the_kernels() -> None:
    """Statuses, kinds, sources…: the values an event field may take are the kernel's."""
    by_type = {typing.get_args(m.model_fields["type"].annotation)[0]: m for m in E.EVENTS}
    for cls in typing.get_args(K.Event):
        if cls is K.SubRunEvent:
            continue
        source = K.RunResult if cls is K.RunEnd else cls  # run_end's fields are its result's
        hints, model = typing.get_type_hints(source), by_type[cls.type]
        for f in dataclasses.fields(source):
            kernel = literals(hints[f.name])
            if kernel:
                assert literals(model.model_fields[f.name].annotation) == kernel, (cls.type, f.name)
    assert literals(R.ServerCapabilities.model_fields["modes"].annotation.__args__[0]) == set(H.MODES)


USAGE = usage_to_wire(Usage(input_tokens=3, output_tokens=4), None)
PRICED = usage_to_wire(Usage(input_tokens=3, output_tokens=4, cache_read_tokens=900), 0.0012345)
PRICES = PriceTable({})
TOOL_CALL = K.PermissionToolCall(
    tool_call_id="c1",
    name="edit",
    kind="edit",
    title="Edit a.py",
    args={"path": "a.py"},
    path="a.py",
    preview=K.ChangePreview(diff="--- a\n+++ b\n", old_text=None, new_text="x\n"),
)
TOOL_CALL_WIRE = {
    "toolCallId": "c1",
    "name": "edit",
    "kind": "edit",
    "title": "Edit a.py",
    "args": {"path": "a.py"},
    "path": "a.py",
    "diff": "--- a\n+++ b\n",
    "oldText": None,
    "newText": "x\n",
}
EVENTS: list[K.Event] = [
    K.RunStart(
        run_id="run-1", session_id="s", workspace="/w", mode="ask", provider="scripted", model="m", prompt="p"
    ),
    K.UserInput(text="hi", source="steer"),
    K.MessageDelta(kind="thinking", delta="hm"),
    K.MessageEnd(
        message=AssistantMessage(
            text="t",
            stop_reason="tool_use",
            usage=Usage(),
            tool_calls=(ToolCall(id="c1", name="read"),),
            provider="p",
            model="m",
            vendor={"sig": "x"},
        )
    ),
    K.MessageEnd(message=AssistantMessage(stop_reason="error", error="boom", error_code="e"), entry_id="e1"),
    K.ToolCallEvent(
        tool_call_id="c1", name="bash", kind="execute", title="Run ls", args={"command": "ls"}, command="ls"
    ),
    K.ToolUpdate(tool_call_id="c1", status="in_progress", output="a\n"),
    K.ToolUpdate(tool_call_id="c1", status="completed", diff="d", is_error=False, details={"exitCode": 0}),
    K.PermissionRequest(
        request_id="r:1",
        tool_call=TOOL_CALL,
        risk="medium",
        reason="edits",
        operation="write",
        scope="workspace",
    ),
    K.PermissionResolved(
        request_id=None, tool_call_id="c1", decision="reject_once", approved=False, source="policy"
    ),
    K.PermissionResolved(
        request_id="r:1",
        tool_call_id="c1",
        decision="allow_always",
        approved=True,
        source="host",
        reason="ok",
    ),
    K.QueueUpdate(steering=("a",), follow_up=()),
    K.UsageEvent(turn=USAGE, total=USAGE),
    K.UsageEvent(turn=PRICED, total=PRICED, context=context_use(Usage(input_tokens=900), 64_000)),
    K.RetryEvent(attempt=1, max_attempts=3, delay_seconds=1, error="503"),
    K.CompactionEvent(status="started", trigger="manual"),
    K.CompactionEvent(status="completed", trigger="overflow", entry_id="e", tokens_before=9, tokens_after=1),
    K.UserInput(text="hi", source="prompt", entry_id="e0"),
    K.RunResult(
        run_id="run-1",
        session_id="s",
        status="failed",
        stop_reason="cost_limit",
        text="",
        error={"code": "cost_limit", "message": "x"},
        changed_paths=("a.py",),
        patch="p",
        usage=PRICED,
        turns=2,
    ).to_event(),
]


@pytest.mark.parametrize("event", EVENTS, ids=[e.type for e in EVENTS])
def test_kernel_events_are_their_wire_models(event: K.Event) -> None:
    conforms(
        E.AgentEventParams, {"runId": "run-1", "sessionId": "s", "seq": 0, "event": K.event_to_dict(event)}
    )


def test_message_end_carries_the_message_and_sends_its_session_form() -> None:
    end = EVENTS[3]
    assert isinstance(end, K.MessageEnd) and isinstance(end.message, AssistantMessage)
    assert K.event_to_dict(end) == {"type": "message_end", "message": message_to_dict(end.message)}


def test_a_permission_request_is_the_agent_permission_params() -> None:
    event = K.event_to_dict(EVENTS[8])
    assert json.dumps(event["toolCall"]) == json.dumps(
        TOOL_CALL_WIRE
    )  # the same bytes, key order and null included
    request = EVENTS[8]
    assert isinstance(request, K.PermissionRequest)
    bare_call = dataclasses.replace(TOOL_CALL, path=None, preview=None)
    bare = K.event_to_dict(dataclasses.replace(request, tool_call=bare_call))
    assert list(bare["toolCall"]) == ["toolCallId", "name", "kind", "title", "args"]
    conforms(
        E.PermissionParams,
        {"runId": "run-1", "sessionId": "s", **{k: v for k, v in event.items() if k != "type"}},
    )


def test_drift_is_caught() -> None:
    event = K.event_to_dict(EVENTS[1])
    with pytest.raises(Exception, match="extra"):
        conforms(E.AgentEventParams, {"runId": "r", "sessionId": "s", "seq": 0, "event": {**event, "new": 1}})
    with pytest.raises(Exception):  # noqa: B017 - any validation error
        conforms(
            E.AgentEventParams, {"runId": "r", "sessionId": "s", "seq": 0, "event": {**event, "source": 1}}
        )


@pytest.mark.parametrize(
    ("settings", "env"),
    [
        (H.Settings(), {}),
        (H.Settings(mode="auto", approval_timeout=2.0, approval_timeout_set=True), {}),
        (
            H.Settings(),
            {"KGENT_PERMISSION_MODE": "nonsense", "KGENT_APPROVAL_TIMEOUT": "5", "KGENT_PROVIDER": "x"},
        ),
    ],
)
def test_the_boot_paths_initialize_answer_is_an_initialize_result(
    settings: H.Settings, env: dict[str, str]
) -> None:
    conforms(W.InitializeResult, H.initialize_result(1, settings, env))


def test_session_shapes_are_the_session_layers() -> None:
    info = SessionInfo(
        id="s", workspace="/w", created="c", updated="u", title="t", entry_count=2, leaf_id="e2"
    )
    conforms(R.SessionInfo, {**info.to_dict(), "liveRunId": None})
    user = SessionEntry(
        id="e1",
        parent_id=None,
        type="message",
        timestamp="t",
        data={"message": {"role": "user", "text": "hi"}},
    )
    other = SessionEntry(
        id="e2",
        parent_id="e1",
        type="permission",
        timestamp="t",
        data={"toolCallId": "c", "decision": "allow_once", "approved": True},
    )
    label = SessionEntry(
        id="e3", parent_id="e2", type="label", timestamp="t", data={"targetId": "e1", "label": "x"}
    )
    tree = SessionTree(info=info, entries={e.id: e for e in (user, other, label)}, leaf_id="e3")
    data: dict[str, Any] = tree_to_dict(tree)
    conforms(
        R.SessionResult, {**data, "liveRunId": "run-1", "usage": session_usage(tree.entries.values(), PRICES)}
    )
