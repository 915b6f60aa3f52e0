"""The terminal as a front's run port (kgent.service.runs.RunPort): `kgent run` and `kgent debug` start their runs
with the shared service (`RunService.start_run`, as the daemon, HTTP and ACP do) and take them here — each event to
the renderer, each approval asked on the TTY (one at a time; a prompt the run made moot is abandoned), or rejected
when nobody can answer."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kgent.core.events import Event, PermissionAnswer, PermissionRequest, SubRunEvent
from kgent.service.runs import Decision, FileScope, RunRef

Answer = str | PermissionAnswer


class TerminalPort:
    """Where a terminal run's events and prompts go. `answer`: who decides instead of a person (a scripted
    approver); else a person on the TTY when `interactive`, else every prompt is rejected."""

    def __init__(
        self,
        renderer: Any,
        *,
        interactive: bool,
        answer: Callable[[PermissionRequest], Answer] | None = None,
    ) -> None:
        self.renderer = renderer
        self.interactive = interactive
        self.answer = answer
        self._one_at_a_time = (
            asyncio.Lock()
        )  # sub-agents side by side may ask together: one prompt on the TTY

    def send(self, ref: RunRef, seq: int, event: Event) -> None:
        if ref.parent_run_id is not None:  # a sub-agent's event: the renderer shows it under its task
            event = SubRunEvent(run_id=ref.run_id, parent_run_id=ref.parent_run_id, event=event)
        self.renderer.event(event)

    async def ask(self, ref: RunRef, request: PermissionRequest) -> Decision:
        if self.answer is not None:
            return _decision(self.answer(request))
        if not self.interactive:
            return Decision("reject_once")
        async with self._one_at_a_time:
            return _decision(await _ask_in_thread(request))

    def text_files(self, scope: FileScope) -> None:
        """The terminal has no buffers: files are read and written on disk."""
        return None


def _decision(answer: Answer) -> Decision:
    if isinstance(answer, PermissionAnswer):  # approved with changes, in $EDITOR
        return Decision(answer.option_id, new_text=answer.new_text)
    return Decision(answer)


async def _ask_in_thread(request: PermissionRequest) -> Answer:
    """Ask on the terminal; cancelled when the prompt became moot (the run ended, was cancelled, or timed out).

    The prompt blocks in a daemon thread, not the loop's executor: a prompt the run made moot must not keep the
    process alive waiting for Enter.
    """
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[Answer] = loop.create_future()

    def settle(decision: Answer) -> None:
        if not answered.done():
            answered.set_result(decision)

    def prompt() -> None:
        decision: Answer
        try:
            decision = ask_on_tty(request)
        except BaseException:  # noqa: BLE001 - anything but an answer is a reject
            decision = "reject_once"
        try:
            loop.call_soon_threadsafe(settle, decision)
        except RuntimeError:  # the loop is gone: nobody is waiting any more
            pass

    threading.Thread(target=prompt, name="kgent-approval", daemon=True).start()
    try:
        return await answered
    except asyncio.CancelledError:
        print(file=sys.stderr)  # leave the abandoned prompt's line
        raise


# The key for each option the daemon may offer (any other option gets its number).
_KEYS = {
    "allow_once": "y",
    "allow_always": "a",
    "allow_always_project": "p",
    "reject_once": "n",
    "reject_always": "r",
    "reject_always_project": "x",
}


def prompt_lines(request: PermissionRequest) -> tuple[list[str], dict[str, str]]:
    """The approval prompt: one line per option offered (its name says the rule and how long it lasts), the
    reason no 'always' is offered (`noRule`), and the keys that choose them."""
    lines: list[str] = []
    keys: dict[str, str] = {}
    for number, option in enumerate(request.options, 1):
        key = _KEYS.get(option.option_id, str(number))
        keys[key] = option.option_id
        lines.append(f"  [{key}] {option.name}")
    if request.no_rule:
        lines.append(f"  (no 'always': {request.no_rule})")
    return lines, keys


def ask_on_tty(request: PermissionRequest) -> str | PermissionAnswer:
    """Prompt on the terminal; EOF or anything unexpected is a reject. An edit or write may be changed in $VISUAL /
    $EDITOR first, and then approved as the user's version."""
    lines, keys = prompt_lines(request)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    can_edit = bool(editor) and request.tool_call.preview is not None
    print("\n".join(lines))
    extra = " or [e]dit it first" if can_edit else ""
    try:
        answer = input(f"  allow? [{'/'.join(keys)}]{extra}: ").strip().lower()
    except EOFError:
        return "reject_once"
    if answer[:1] == "e" and can_edit and editor:
        return edited_in_editor(request, editor)
    return keys.get(answer, keys.get(answer[:1], "reject_once"))


def edited_in_editor(request: PermissionRequest, editor: str) -> str | PermissionAnswer:
    """Open the proposed text in `editor`; what it saves is approved once as the user's version (approve with
    changes). An editor that fails (or cannot start) is a reject."""
    preview = request.tool_call.preview
    assert preview is not None
    suffix = Path(request.tool_call.path or "").suffix or ".txt"
    fd, name = tempfile.mkstemp(prefix="kgent-approve-", suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(preview.new_text)
        try:
            code = subprocess.run([*shlex.split(editor), name], check=False).returncode
        except OSError as exc:
            print(f"  could not start the editor ({exc.strerror or exc}): rejected", file=sys.stderr)
            return "reject_once"
        if code != 0:
            print(f"  the editor exited with status {code}: rejected", file=sys.stderr)
            return "reject_once"
        with open(name, encoding="utf-8", newline="") as f:
            return PermissionAnswer("allow_once", f.read())
    finally:
        os.unlink(name)
