"""The one policy for a permission answer's newText (every front): only an allow option of a request whose toolCall
has newText may carry it; the fronts refuse other answers (and keep the prompt open), `decide` rejects them."""

from __future__ import annotations

import pytest

from kgent.core.events import ChangePreview, PermissionRequest, PermissionToolCall
from kgent.service.runs import REJECT, Decision, decide, new_text_problem
from kgent.service.wire import chosen_answer


def request(preview: bool) -> PermissionRequest:
    call = PermissionToolCall(
        tool_call_id="c1",
        name="edit" if preview else "bash",
        kind="edit" if preview else "execute",
        title="t",
        args={},
        preview=ChangePreview(diff="d", old_text="a\n", new_text="b\n") if preview else None,
    )
    return PermissionRequest(
        request_id="r1", tool_call=call, risk="medium", reason="r", operation="write", scope="workspace"
    )


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"outcome": "selected", "optionId": "allow_once", "newText": "x\n"}, ("allow_once", "x\n")),
        (
            {"outcome": {"outcome": "selected", "optionId": "allow_always", "newText": ""}},
            ("allow_always", ""),
        ),
        ({"outcome": "selected", "optionId": "allow_once"}, ("allow_once", None)),
        ({"outcome": "selected", "optionId": "allow_once", "newText": 3}, ("reject_once", None)),
        ({"outcome": "cancelled"}, ("reject_once", None)),
    ],
)
def test_chosen_answer(answer: object, expected: tuple[str, str | None]) -> None:
    assert chosen_answer(answer) == expected


def test_new_text_only_with_an_allow_option_on_an_edit() -> None:
    assert new_text_problem(request(True), "allow_once", "mine\n") is None
    assert new_text_problem(request(True), "reject_once", None) is None
    assert "allow option" in (new_text_problem(request(True), "reject_once", "mine\n") or "")
    assert "allow option" in (new_text_problem(request(True), "not offered", "mine\n") or "")
    assert "toolCall has newText" in (new_text_problem(request(False), "allow_once", "x") or "")


def test_decide_never_approves_a_new_text_it_may_not_carry() -> None:
    edit, shell = request(True), request(False)
    assert decide(Decision("allow_once", new_text="mine\n"), edit) == Decision(
        "allow_once", new_text="mine\n"
    )
    assert decide(Decision("allow_once", new_text="x"), shell) == REJECT
    assert decide(Decision("reject_once", new_text="x"), edit) == REJECT
