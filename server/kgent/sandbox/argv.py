# Concept: a command line as Kgent itself runs it — argvs, wired into pipelines and `&&` / `||` / `;` lists, with no
# shell reading the text again. Built by the command classifier (kgent.permissions.commands) from the one parse it
# judged; run by the bash tool inside the sandbox (kgent.sandbox.pipeline). Stdlib only.
"""`Plan`: the argvs of an unasked shell command, exactly as they were judged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# What a pipeline's exit status decides: run it always (";", or the first), only after success, only after failure.
Joint = Literal["", ";", "&&", "||"]


@dataclass(frozen=True, slots=True)
class Stage:
    """One program of a pipeline. `redirects`, applied in order: (fd, source), fd 1 or 2 made a copy of fd 1 or 2
    (`2>&1`) or `/dev/null` (source None). `pipe_stderr`: `|&` after it (stderr joins stdout, after `redirects`)."""

    argv: tuple[str, ...]
    redirects: tuple[tuple[int, int | None], ...] = ()
    pipe_stderr: bool = False


@dataclass(frozen=True, slots=True)
class Plan:
    """A command line as Kgent runs it: pipelines, each with the joint that says whether it runs (bash's rules: `&&`
    and `||` left to right at one level, `;` always); the exit status is the last pipeline's last program's."""

    steps: tuple[tuple[Joint, tuple[Stage, ...]], ...]

    def argvs(self) -> tuple[tuple[str, ...], ...]:
        """Every program's argv, in order."""
        return tuple(stage.argv for _, stages in self.steps for stage in stages)
