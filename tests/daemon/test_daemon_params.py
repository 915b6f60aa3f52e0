"""Request params at the edge: prompt content blocks become one text; wrong shapes are ParamsErrors."""

from __future__ import annotations

import pytest

from kgent.daemon import params as P
from kgent.daemon.handshake import ParamsError


def test_prompt_blocks_become_text() -> None:
    blocks = [
        {"type": "text", "text": "Look:"},
        {"type": "resource_link", "uri": "file:///a/b.py", "name": "b.py", "mimeType": "text/x-python"},
        {"type": "resource", "resource": {"uri": "file:///a/c.txt", "text": "hello"}},
    ]
    assert P.prompt_text(blocks) == 'Look:\n\n[b.py](file:///a/b.py)\n\n<resource uri="file:///a/c.txt">\nhello\n</resource>'
    assert P.prompt_text("plain") == "plain"


@pytest.mark.parametrize(
    "prompt",
    [None, "", "   ", [], [{"type": "image", "data": "", "mimeType": "image/png"}], [{"type": "text"}], ["text"],
     [{"type": "resource", "resource": {"uri": "u", "blob": "AAAA"}}], 42, {"type": "text", "text": "x"}],
)
def test_bad_prompts(prompt: object) -> None:
    with pytest.raises(ParamsError):
        P.prompt_text(prompt)


def test_run_params() -> None:
    p = P.run_params({"prompt": "x", "workspace": "/w", "mode": "ALLOW-ALL", "extra": 1})
    assert (p.workspace, p.mode, p.session_id) == ("/w", "full", None)
    resumed = P.run_params({"prompt": "x", "sessionId": "s1", "parentEntryId": "e1"})
    assert resumed.workspace is None and resumed.parent_entry_id == "e1"
    for bad in ({"prompt": "x"}, {"prompt": "x", "workspace": "w"}, {"prompt": "x", "workspace": "/w", "mode": "yolo"},
                {"prompt": "x", "workspace": "/w\x00"}, {"prompt": "x", "workspace": "/w", "parentEntryId": "e"}):
        with pytest.raises(ParamsError):
            P.run_params(bad)
    with pytest.raises(ParamsError) as mode:
        P.run_params({"prompt": "x", "workspace": "/w", "mode": "yolo"})
    assert mode.value.code == "unknown_permission_mode"


@pytest.mark.parametrize("bad", [0, -1, "1", True, float("nan"), float("inf"), [1]])
def test_cost_limit_is_a_positive_number(bad: object) -> None:
    assert P.run_params({"prompt": "x", "workspace": "/w", "costLimit": 2}).cost_limit == 2.0
    assert P.run_params({"prompt": "x", "workspace": "/w"}).cost_limit is None
    with pytest.raises(ParamsError, match="'costLimit' must be a positive number"):
        P.run_params({"prompt": "x", "workspace": "/w", "costLimit": bad})


def test_omitted_params_are_empty_and_positional_params_refused() -> None:
    assert P.obj(None) == {}
    with pytest.raises(ParamsError):
        P.obj([1, 2])
    assert P.session({"sessionId": "s"}) == ("s", False)
    assert P.compact({"sessionId": "s", "instructions": ""}).instructions is None
