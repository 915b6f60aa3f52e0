"""Shared test helpers: collect a run's events while answering approvals; wait for something to become true; scripts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from kgent.core.events import Event, PermissionRequest, prompt_of


async def collect(run: Any, answer: str | Callable[[PermissionRequest], str] = "allow_once") -> list[Event]:
    events: list[Event] = []
    async for event in run:
        events.append(event)
        asked = prompt_of(event)  # the run's own prompt or a sub-agent's: the same answer
        if asked is not None:
            decision = answer(asked) if callable(answer) else answer
            run.resolve_permission(asked.request_id, decision)
    return events


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]


def conforms(wire_type: Any, value: Any) -> None:
    """`value`, something the daemon sent, is exactly what its wire type (kgent.service.wire) describes: it validates,
    and nothing in it is dropped or changed on the way back out."""
    from pydantic import BaseModel, TypeAdapter

    from kgent.service.wire import Payload

    if wire_type is None:
        assert value is None, value
        return
    checked = TypeAdapter(wire_type).validate_python(value)
    if isinstance(checked, Payload):
        assert checked.wire() == value, (wire_type, value)
    else:
        assert (
            not isinstance(checked, BaseModel)
            or checked.model_dump(by_alias=True, exclude_unset=True) == value
        )


# How long a test waits for what should happen at once. Generous: on a loaded machine (CI, 3x oversubscribed) a
# process can stall for seconds, and a passing test never waits this long anyway.
PATIENCE = 30.0


async def eventually(predicate: Callable[[], Any], what: str, within: float = PATIENCE) -> Any:
    """Poll `predicate` until it is truthy (returned) or `within` seconds pass (AssertionError naming `what`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not (value := predicate()):
        assert loop.time() < deadline, f"still waiting for {what} after {within} s"
        await asyncio.sleep(0.01)
    return value


# Any JSON value, small: what hostile clients send (the fuzz tests of every front).
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)


def processes_with(marker: str) -> list[int]:
    """The live pids (this process and zombies excluded) whose command line contains `marker`: a command given a
    unique marker (a trailing `# marker` comment, a `sleep` of an odd number of seconds) can be checked to be gone,
    with no sleep-and-see."""
    import os
    from pathlib import Path

    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):  # gone meanwhile
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


SUB_AGENTS = ("Alpha", "Beta", "Gamma")


def three_asking_sub_agents(path: Path, answer: str = "All three are done.") -> str:
    """A script file (at `path`): one model turn of three `task` calls (ids t0…t2, named SUB_AGENTS), each sub-agent
    running one command (asked in `ask` mode) and then answering "<name> is done."; then `answer`."""
    calls = [
        {"tool": "task", "id": f"t{i}", "args": {"description": n, "prompt": f"job {n}", "tools": ["bash"]}}
        for i, n in enumerate(SUB_AGENTS)
    ]
    prompts = {
        f"job {n}": [
            [{"tool": "bash", "args": {"command": f"python3 -c 'print(\"{n}\")'"}}],
            [{"text": f"{n} is done."}],
        ]
        for n in SUB_AGENTS
    }
    path.write_text(json.dumps({"turns": [calls, [{"text": answer}]], "prompts": prompts}))
    return str(path)
