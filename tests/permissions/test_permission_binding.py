"""Approval binding: the hash covers call id, tool and every argument, and ignores key order."""

from __future__ import annotations

from typing import Any

import pytest

from kgent.permissions import binding_hash, canonical_json, request_id

ARGS: dict[str, Any] = {"path": "src/app.py", "old_text": "a", "new_text": "b", "opts": {"x": 1, "y": [1, 2]}}


def test_hash_is_sha256_hex_of_canonical_json() -> None:
    import hashlib

    expected = hashlib.sha256(
        canonical_json({"call_id": "c1", "tool_name": "edit", "args": ARGS}).encode()
    ).hexdigest()
    assert binding_hash("c1", "edit", ARGS) == expected
    assert len(expected) == 64


def test_canonical_json_is_sorted_compact_and_keeps_unicode() -> None:
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


def test_hash_is_stable_under_key_order_at_every_depth() -> None:
    shuffled = {"opts": {"y": [1, 2], "x": 1}, "new_text": "b", "path": "src/app.py", "old_text": "a"}
    assert binding_hash("c1", "edit", shuffled) == binding_hash("c1", "edit", ARGS)


@pytest.mark.parametrize(
    "changed",
    [
        {**ARGS, "path": "src/other.py"},
        {**ARGS, "new_text": "b "},
        {**ARGS, "opts": {"x": 2, "y": [1, 2]}},
        {**ARGS, "opts": {"x": 1, "y": [2, 1]}},
        {**ARGS, "opts": {"x": "1", "y": [1, 2]}},
        {**ARGS, "extra": None},
        {k: v for k, v in ARGS.items() if k != "old_text"},
    ],
)
def test_changing_any_argument_changes_the_hash(changed: dict[str, Any]) -> None:
    assert binding_hash("c1", "edit", changed) != binding_hash("c1", "edit", ARGS)


def test_call_id_and_tool_name_are_bound_too() -> None:
    base = binding_hash("c1", "edit", ARGS)
    assert binding_hash("c2", "edit", ARGS) != base
    assert binding_hash("c1", "write", ARGS) != base


def test_non_ascii_and_lone_surrogates_hash_without_error() -> None:
    assert binding_hash("c", "write", {"content": "naïve ✓"}) != binding_hash(
        "c", "write", {"content": "naive ✓"}
    )
    assert len(binding_hash("c", "write", {"content": "\ud800"})) == 64


def test_request_id_names_run_counter_and_binding_prefix() -> None:
    binding = binding_hash("c1", "edit", ARGS)
    assert request_id("run-7", 3, binding) == f"run-7:perm:3:{binding[:12]}"
