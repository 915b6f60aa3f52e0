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

    from kgent.core.events import MessageDelta, event_to_dict
    from kgent.service.runs import RunHandle

    class Out:
        def __init__(self) -> None:
            self.bodies: list[str] = []

        def send_event(self, run_id: str, seq: int, params: str) -> None:
            assert run_id == "run-1"
            assert json.loads(params)["seq"] == seq
            self.bodies.append(params)

    class Run:
        run_id, session_id = "run-1", 's"1'

    out = Out()
    handle = RunHandle(Run(), out, lambda h: None)  # type: ignore[arg-type]
    for delta in ("x ", 'é\u2028"\\\n', ""):
        for kind in ("text", "thinking"):
            event = MessageDelta(kind=kind, delta=delta)  # type: ignore[arg-type]
            handle._send(event_to_dict(event))
            handle._send_delta(event)
    pairs = [json.loads(b) for b in out.bodies]
    for generic, fast in zip(pairs[::2], pairs[1::2], strict=True):
        assert fast["seq"] == generic["seq"] + 1
        fast["seq"] = generic["seq"]
        assert fast == generic
