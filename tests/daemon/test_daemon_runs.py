"""What an agent/permission answer selects: only a clear selection of an offered option approves."""

from __future__ import annotations

import pytest

from kgent.service.wire import chosen_option


@pytest.mark.parametrize(
    ("answer", "option"),
    [
        ({"outcome": "selected", "optionId": "allow_once"}, "allow_once"),
        ({"outcome": {"outcome": "selected", "optionId": "allow_always"}}, "allow_always"),
        ({"outcome": "cancelled"}, "reject_once"),
        ({"outcome": "selected"}, "reject_once"),
        ({"outcome": "selected", "optionId": 1}, "reject_once"),
        ({"optionId": "allow_once"}, "reject_once"),
        ({"outcome": "approved", "optionId": "allow_once"}, "reject_once"),
        (None, "reject_once"),
        ("allow_once", "reject_once"),
        ([{"outcome": "selected", "optionId": "allow_once"}], "reject_once"),
    ],
)
def test_chosen_option(answer: object, option: str) -> None:
    assert chosen_option(answer) == option


def test_the_delta_fast_path_sends_the_generic_bytes() -> None:
    import json
    from types import SimpleNamespace

    from kgent.core.events import MessageDelta, event_to_dict
    from kgent.daemon.port import DaemonPort
    from kgent.service.runs import RunRef

    bodies: list[bytes] = []
    proto = SimpleNamespace(frames=SimpleNamespace(send_body=bodies.append))
    port = DaemonPort(proto)  # type: ignore[arg-type]
    for ref in (RunRef("run-1", 's"1'), RunRef("run-2", "s1", parent_run_id="run-1")):
        for delta in ("x ", 'é\u2028"\\\n', ""):
            for kind in ("text", "thinking"):
                event = MessageDelta(kind=kind, delta=delta)  # type: ignore[arg-type]
                port.send(ref, 7, event)
                frame = json.loads(bodies.pop())
                assert frame["method"] == "agent/event"
                expected = {"runId": ref.run_id, "sessionId": ref.session_id, "seq": 7}
                if ref.parent_run_id is not None:
                    expected["parentRunId"] = ref.parent_run_id
                assert frame["params"] == {**expected, "event": event_to_dict(event)}
