"""MemoryPort: the run port (kgent.service.runs) in memory — events kept per run, prompts answered by a function or
left open until a test answers them — for tests, benchmarks and demos that drive the shared service without a wire."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from kgent.core.events import Event, PermissionRequest, RunEnd
from kgent.service.runs import Decision, FileScope, RunRef


@dataclass
class Asked:
    """One open prompt: what was asked, and the future its answer goes into."""

    ref: RunRef
    request: PermissionRequest
    answer: asyncio.Future[Decision] = field(repr=False)


class MemoryPort:
    """Implements RunPort. `answer` (if given) decides each prompt at once; otherwise prompts wait in `asked` until
    `answer_now` (or stay open). `withdrawn` lists the prompts the service withdrew; `ended` fires per run end."""

    def __init__(self, answer: Callable[[PermissionRequest], Decision] | None = None) -> None:
        self.policy = answer
        self.events: dict[str, list[tuple[int, Event]]] = {}
        self.order: list[
            tuple[str, str]
        ] = []  # (run id, "event:<type>" | "withdrawn:<request id>"), in order
        self.asked: dict[str, Asked] = {}
        self.withdrawn: list[str] = []
        self._changed = asyncio.Event()

    def send(self, ref: RunRef, seq: int, event: Event) -> None:
        self.events.setdefault(ref.run_id, []).append((seq, event))
        self.order.append((ref.run_id, f"event:{event.type}"))
        self._wake()

    async def ask(self, ref: RunRef, request: PermissionRequest) -> Decision:
        if self.policy is not None:
            return self.policy(request)
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self.asked[request.request_id] = Asked(ref, request, future)
        self._wake()
        try:
            return await future
        except asyncio.CancelledError:
            self.asked.pop(request.request_id, None)
            self.withdrawn.append(request.request_id)
            self.order.append((ref.run_id, f"withdrawn:{request.request_id}"))
            self._wake()
            raise

    def text_files(self, scope: FileScope) -> None:
        return None

    def answer_now(self, request_id: str, decision: Decision) -> None:
        self.asked.pop(request_id).answer.set_result(decision)

    def ended(self, run_id: str) -> bool:
        return any(isinstance(e, RunEnd) for _, e in self.events.get(run_id, []))

    async def until(self, condition: Callable[[], bool], within: float = 30.0) -> None:
        """Wait (with a deadline) until `condition()` holds; checked after every event, prompt and withdrawal."""

        async def wait() -> None:
            while not condition():
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), within)

    def _wake(self) -> None:
        self._changed.set()
