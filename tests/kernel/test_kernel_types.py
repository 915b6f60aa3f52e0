"""Typed inside, camelCase only at the edge: the kernel's values are the core's dataclasses and Literals, with no
`type: ignore` to paper over a str where a Mode or a Literal belongs."""

from __future__ import annotations

import typing
from pathlib import Path

import kgent.kernel
from kgent.core import events as K
from kgent.core.messages import AssistantMessage
from kgent.kernel.loop import RunSpec
from kgent.permissions import Mode


def test_no_type_ignore_in_the_kernel() -> None:
    root = Path(kgent.kernel.__file__).parent
    found = [
        f"{path.name}:{n}"
        for path in sorted(root.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "type: ignore" in line
    ]
    assert found == []


def test_events_and_the_run_spec_carry_typed_values() -> None:
    assert typing.get_type_hints(RunSpec)["mode"] == Mode
    assert typing.get_type_hints(K.MessageEnd)["message"] is AssistantMessage
    assert typing.get_type_hints(K.PermissionRequest)["tool_call"] is K.PermissionToolCall
    assert typing.get_type_hints(K.PermissionResolved)["source"] == K.DecisionSource
    assert typing.get_type_hints(K.UserInput)["source"] == K.InputSource
