"""RunRequest: what `RunService.start_run` reads of a request to start a run — the wire fronts' `W.RunParams` as it is,
or a `NewRun` built by a front without wire models (`kgent run`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kgent.core.messages import ImagePart


class RunRequest(Protocol):
    """The prompt (its text and images), where it runs and what it may do; None: the connection's default."""

    @property
    def text(self) -> str: ...
    @property
    def images(self) -> Sequence[ImagePart]: ...
    @property
    def workspace(self) -> str | None: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def parent_entry_id(self) -> str | None: ...
    @property
    def mode(self) -> str | None: ...
    @property
    def provider(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def cost_limit(self) -> float | None: ...
    @property
    def max_turns(self) -> int | None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class NewRun:
    """A RunRequest as a value (checked by the kernel when the run starts, as every run is)."""

    text: str
    images: tuple[ImagePart, ...] = ()
    workspace: str | None = None
    session_id: str | None = None
    parent_entry_id: str | None = None
    mode: str | None = None
    provider: str | None = None
    model: str | None = None
    cost_limit: float | None = None
    max_turns: int | None = None
