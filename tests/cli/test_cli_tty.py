"""The terminal that a run's lines and its approval question share (kgent.cli.terminal.Tty): sub-agents side by side
go on printing while one of them waits for an answer, and the question must stay the terminal's last line — each line
printed meanwhile takes the question's line and the question follows it again; while $EDITOR has the terminal, the
lines wait until it exits."""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from rich.console import Console

from kgent.cli.terminal import Tty

QUESTION = "  Beta: allow? [y/n]: "


@pytest.fixture
def stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.TextIOWrapper]:
    """A stdin the test types into (a pipe): input() blocks on it until a line comes."""
    read, write = os.pipe()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.FileIO(read, "r")))
    typing = io.TextIOWrapper(io.FileIO(write, "w"), write_through=True)
    yield typing
    typing.close()


def eventually_sync(predicate: Callable[[], bool], within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


def line(console: Console, text: str) -> None:
    console.print(text, soft_wrap=True)


def test_a_line_printed_while_a_question_waits_takes_its_line_and_the_question_follows(
    stdin: io.TextIOWrapper, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    console = Console(file=io.StringIO(), width=80, color_system=None)
    tty = Tty()
    tty.show(lambda: line(console, "  ↳ Alpha started"), console)  # no question: printed as it is
    assert console.file.getvalue() == "  ↳ Alpha started\n"  # type: ignore[attr-defined]
    answers: list[str] = []
    asking = threading.Thread(target=lambda: answers.append(tty.ask(QUESTION, [])))
    asking.start()
    eventually_sync(lambda: tty.question == QUESTION)
    tty.show(lambda: line(console, "  ? Gamma asks: Run `x`"), console)
    tty.show(lambda: None, console)  # an event that prints nothing: the question stays as it is
    stdin.write("y\n")
    asking.join(30)
    assert answers == ["y"] and tty.question is None
    blank = "\r" + " " * len(QUESTION) + "\r"
    assert capsys.readouterr().out == QUESTION + blank + "  ? Gamma asks: Run `x`\n" + QUESTION
    tty.show(lambda: line(console, "  Beta   allowed"), console)  # answered: printed as it is again
    assert console.file.getvalue().endswith("  Beta   allowed\n")  # type: ignore[attr-defined]


def test_a_question_wider_than_the_terminal_is_ended_not_blanked(
    stdin: io.TextIOWrapper, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "10")
    console = Console(file=io.StringIO(), width=80, color_system=None)
    tty = Tty()
    asking = threading.Thread(target=lambda: tty.ask(QUESTION, []))
    asking.start()
    eventually_sync(lambda: tty.question == QUESTION)
    tty.show(lambda: line(console, "  Alpha ▶ Run `x`"), console)
    stdin.write("n\n")
    asking.join(30)
    assert capsys.readouterr().out == QUESTION + "\n  Alpha ▶ Run `x`\n" + QUESTION


def test_while_the_editor_has_the_terminal_lines_wait_until_it_exits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    console = Console(file=io.StringIO(), width=80, color_system=None)
    tty = Tty()
    tty.editing()
    tty.show(lambda: line(console, "  Gamma ▶ Run `x`"), console)
    tty.show(lambda: line(console, "  Gamma   ✓ Run `x`"), console)
    assert capsys.readouterr().out == ""
    tty.edited()
    assert capsys.readouterr().out == "  Gamma ▶ Run `x`\n  Gamma   ✓ Run `x`\n"
    tty.show(lambda: line(console, "  ↳ Gamma settled"), console)
    assert console.file.getvalue() == "  ↳ Gamma settled\n"  # type: ignore[attr-defined]
