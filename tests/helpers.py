"""Shared test helpers: collect a run's events while answering approvals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kgent.core.events import Event, PermissionRequest


async def collect(run: Any, answer: str | Callable[[PermissionRequest], str] = "allow_once") -> list[Event]:
    events: list[Event] = []
    async for event in run:
        events.append(event)
        if isinstance(event, PermissionRequest):
            decision = answer(event) if callable(answer) else answer
            run.resolve_permission(event.request_id, decision)
    return events


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]
