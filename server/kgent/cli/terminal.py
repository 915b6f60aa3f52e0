"""The terminal as a front's run port (kgent.service.runs.RunPort): `kgent run` and `kgent debug` start their runs
with the shared service (`RunService.start_run`, as the daemon, HTTP and ACP do) and take them here — each event to
the renderer, each approval asked on the TTY (one at a time; a prompt the run made moot is abandoned), or rejected
when nobody can answer."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
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
        self._tty = Tty()
        # Whoever read stdout has gone (`kgent run --json ... | head`): the run is stopped (`on_gone`), and nothing
        # more is written.
        self.gone = False
        self.on_gone: Callable[[], None] | None = None

    def send(self, ref: RunRef, seq: int, event: Event) -> None:
        if self.gone:
            return
        if ref.parent_run_id is not None:  # a sub-agent's event: the renderer shows it under its task
            event = SubRunEvent(run_id=ref.run_id, parent_run_id=ref.parent_run_id, event=event)
        console = getattr(self.renderer, "console", None)
        try:
            if console is None or not self.interactive:
                self.renderer.event(event)
            else:  # a question may be open on the terminal meanwhile (sub-agents side by side)
                self._tty.show(lambda: self.renderer.event(event), console)
        except BrokenPipeError:
            self.reader_gone()

    def note(self, what: dict[str, Any]) -> None:
        """A line of the command's own (not a run's event), unless the reader has gone."""
        if not self.gone:
            try:
                self.renderer.note(what)
            except BrokenPipeError:
                self.reader_gone()

    def reader_gone(self) -> None:
        """stdout's reader has closed it: stop the run, write nothing more."""
        if self.gone:
            return
        from kgent.cli.main import stdout_to_devnull

        self.gone = True
        stdout_to_devnull()
        if self.on_gone is not None:
            self.on_gone()

    async def ask(self, ref: RunRef, request: PermissionRequest) -> Decision:
        if self.answer is not None:
            return _decision(self.answer(request))
        if not self.interactive:
            return Decision("reject_once")
        async with self._one_at_a_time:
            return _decision(await _ask_in_thread(request, self._tty))

    def text_files(self, scope: FileScope) -> None:
        """The terminal has no buffers: files are read and written on disk."""
        return None


class Tty:
    """The terminal that a run's lines (printed by the loop) and its approval questions (asked in a thread) share.
    While a question waits for its answer, what the run prints — sub-agents side by side go on meanwhile — takes the
    question's line and the question is shown again after it, so the last line is always the question being asked;
    while $EDITOR has the terminal, it is held back and shown once the editor exits."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.question: str | None = None  # the question waiting for its answer
        # whose question it is (an abandoned question's thread must not clear another's)
        self.asker: object | None = None
        self.line_open = False  # the terminal's last line is a question, not ended
        self.held: list[str] | None = None  # what was printed while an editor has the terminal

    def show(self, render: Callable[[], None], console: Any) -> None:
        """Render (the loop's side): as it is when no question is open, else captured and placed around it."""
        with self.lock:
            if self.question is None and not self.line_open and self.held is None:
                render()
                return
            with console.capture() as captured:
                render()
            text = captured.get()
            if not text:
                return
            if self.held is not None:
                self.held.append(text)
                return
            if self.question is not None and not text.endswith("\n"):
                text += "\n"  # the question on a line of its own
            self._write(self._clear_question() + text + (self.question or ""))
            self.line_open = self.question is not None

    def _clear_question(self) -> str:
        """What takes the open question off its line, so what follows starts there: blanked over when it fits on one
        line of the terminal, else just ended."""
        if not self.line_open:
            return ""
        width = shutil.get_terminal_size().columns
        if self.question is None or len(self.question) >= width:
            return "\n"
        return "\r" + " " * len(self.question) + "\r"

    def ask(self, question: str, lines: list[str]) -> str:
        """Show `lines` and ask `question` (at once: nothing the run prints comes between them), then read the answer
        (the thread's side); EOFError as input() raises it."""
        asker = object()
        with self.lock:
            self.question, self.asker, self.line_open = question, asker, True
            self._write("".join(f"{line}\n" for line in lines) + question)
        try:
            return input()
        finally:
            self.done(asker)

    def done(self, asker: object | None = None) -> None:
        """The question is answered (its Enter ended the line) or abandoned (then by anyone: `asker` None)."""
        with self.lock:
            if asker is None or self.asker is asker:
                self.question = self.asker = None
                self.line_open = False

    def editing(self) -> None:
        with self.lock:
            self.held = []

    def edited(self) -> None:
        with self.lock:
            held, self.held = self.held or [], None
            if held:
                self._write("".join(held))

    @staticmethod
    def _write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()


def _decision(answer: Answer) -> Decision:
    if isinstance(answer, PermissionAnswer):  # approved with changes, in $EDITOR
        return Decision(answer.option_id, new_text=answer.new_text)
    return Decision(answer)


async def _ask_in_thread(request: PermissionRequest, tty: Tty | None = None) -> Answer:
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
            decision = ask_on_tty(request, tty)
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
        if tty is not None:
            tty.done()
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


def _one_line(text: str) -> str:
    return " ".join(text.split())


def ask_on_tty(request: PermissionRequest, tty: Tty | None = None) -> str | PermissionAnswer:
    """Prompt on the terminal; EOF or anything unexpected is a reject. An edit or write may be changed in $VISUAL /
    $EDITOR first, and then approved as the user's version. A sub-agent's prompt names it, on the call it asks about
    and on the question itself (sub-agents side by side may print their own lines while it waits)."""
    tty = tty or Tty()
    lines, keys = prompt_lines(request)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    can_edit = bool(editor) and request.tool_call.preview is not None
    who = f"{_one_line(request.agent)}: " if request.agent else ""
    if request.agent:
        lines.insert(0, f"  {who}{_one_line(request.tool_call.title)}")
    extra = " or [e]dit it first" if can_edit else ""
    try:
        answer = tty.ask(f"  {who}allow? [{'/'.join(keys)}]{extra}: ", lines).strip().lower()
    except EOFError:
        return "reject_once"
    if answer[:1] == "e" and can_edit and editor:
        tty.editing()  # the editor has the terminal: what the run prints meanwhile waits
        try:
            return edited_in_editor(request, editor)
        finally:
            tty.edited()
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
