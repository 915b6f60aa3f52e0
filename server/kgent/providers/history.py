"""Incremental JSON encoding of a conversation: a run's history only grows, so each request encodes only new
messages.

Without this, every model call would re-encode the whole history and a long run would cost O(turns²).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

from kgent.core.messages import Message

# A converted message: (role, parts). Consecutive messages of a role in `merge` share one wire message whose
# content is their parts; any other role's single part is the complete wire message.
Converted = tuple[str, list[bytes]]


class _State:
    __slots__ = ("prefix", "closed", "role", "parts")

    def __init__(self) -> None:
        self.prefix: tuple[Message, ...] = ()
        self.closed: list[bytes] = []
        self.role: str | None = None
        self.parts: list[bytes] = []


class HistoryEncoder:
    """Encodes messages to a comma-joined list of JSON wire messages, reusing the work done for the previous
    request of the same conversation (matched by its first message; a few conversations are remembered)."""

    def __init__(
        self,
        convert: Callable[[Message], Converted],
        *,
        merge: frozenset[str] = frozenset(),
        wrap: Callable[[str, list[bytes]], bytes] | None = None,
        slots: int = 8,
    ) -> None:
        self._convert = convert
        self._merge = merge
        self._wrap = wrap
        self._slots = slots
        self._states: OrderedDict[int, _State] = OrderedDict()

    def encode(self, messages: Sequence[Message]) -> bytes:
        return b",".join(self.encode_parts(messages))

    def encode_parts(self, messages: Sequence[Message]) -> list[bytes]:
        """The wire messages, one JSON object each, in a new list (the caller may change its items)."""
        messages = tuple(messages)
        if not messages:
            return []
        key = id(messages[0])
        state = self._states.get(key)
        n = len(state.prefix) if state is not None else 0
        if state is None or len(messages) < n or messages[:n] != state.prefix:
            state, n = _State(), 0
        self._states[key] = state
        self._states.move_to_end(key)
        while len(self._states) > self._slots:
            self._states.popitem(last=False)
        for message in messages[n:]:
            role, parts = self._convert(message)
            if role in self._merge:
                if role != state.role:
                    self._close(state)
                    state.role = role
                state.parts.extend(parts)
            else:
                self._close(state)
                state.closed.extend(parts)
        state.prefix = messages
        if state.role is None:
            return list(state.closed)
        assert self._wrap is not None
        return [*state.closed, self._wrap(state.role, state.parts)]

    def _close(self, state: _State) -> None:
        if state.role is not None:
            assert self._wrap is not None
            state.closed.append(self._wrap(state.role, state.parts))
            state.role, state.parts = None, []
