"""Prompt-cache accounting as the vendors bill it, emulated for the local model server: how many of a request's input
tokens would be read from the cache or written to it, so tests and benchmarks can see whether the providers' requests
keep hitting.

- `anthropic`: explicit breakpoints (`cache_control` on a tool, a system block or a message block). A breakpoint reads
  the longest prefix cached at a block boundary from it back to `LOOKBACK` blocks before it, and writes its own
  prefix (billed as cache writes: the tokens between what was read and the last breakpoint). Prefixes under
  `min_tokens` (1024, as Claude Sonnet) are not cached. The tokens after the last breakpoint are plain input.
- `openai` (an OpenAI-wire model not named deepseek*): automatic; the longest prefix shared with an earlier
  request, in steps of 128 tokens, from 1024 tokens on; reported as `prompt_tokens_details.cached_tokens`.
- `deepseek`: automatic, in units of 64 tokens; reported as `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`.

The prefix compared is a canonical JSON of the tools, the system prompt and the messages in the order and with the
keys the client sent (cache marks removed): a client that reorders or re-renders anything misses, as it would on
the real services. Tokens are bytes / 4. Nothing expires (a test run is short).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

LOOKBACK = 20
_UNITS = {"openai": (128, 1024), "deepseek": (64, 64)}  # flavour → (step, minimum) in tokens


@dataclass(frozen=True, slots=True)
class CacheUsage:
    """One request's input tokens: `prompt` in all, `read` from the cache, `write` into it (Anthropic only)."""

    flavour: str
    prompt: int
    read: int = 0
    write: int = 0

    @property
    def uncached(self) -> int:
        return max(0, self.prompt - self.read - self.write)

    def openai_fields(self) -> dict[str, Any]:
        """The usage fields of a Chat Completions response, in the flavour's spelling."""
        if self.flavour == "deepseek":
            return {
                "prompt_tokens": self.prompt,
                "prompt_cache_hit_tokens": self.read,
                "prompt_cache_miss_tokens": self.prompt - self.read,
            }
        return {"prompt_tokens": self.prompt, "prompt_tokens_details": {"cached_tokens": self.read}}

    def anthropic_fields(self) -> dict[str, int]:
        """The input usage fields of a Messages response."""
        return {
            "input_tokens": self.uncached,
            "cache_creation_input_tokens": self.write,
            "cache_read_input_tokens": self.read,
        }


def _canonical(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _unmarked(block: Any) -> tuple[Any, bool]:
    if isinstance(block, dict) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}, True
    return block, False


def anthropic_blocks(body: dict[str, Any]) -> list[tuple[bytes, bool]]:
    """The cacheable blocks of a Messages request in prefix order (tools, system, messages): (canonical bytes,
    whether a breakpoint is on it)."""
    blocks: list[tuple[bytes, bool]] = []
    for tool in body.get("tools") or ():
        plain, marked = _unmarked(tool)
        blocks.append((b"tool:" + _canonical(plain), marked))
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or ():
        plain, marked = _unmarked(block)
        blocks.append((b"system:" + _canonical(plain), marked))
    for message in body.get("messages") or ():
        content = message.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content or ()
        for n, block in enumerate(items):
            plain, marked = _unmarked(block)
            role = (str(message.get("role")) + ":").encode() if n == 0 else b""
            blocks.append((role + _canonical(plain), marked))
    return blocks


def _chain(pieces: list[bytes]) -> list[bytes]:
    """Hashes of every prefix: entry i identifies pieces[0..i]."""
    out, previous = [], b""
    for piece in pieces:
        previous = hashlib.blake2b(previous + piece, digest_size=16).digest()
        out.append(previous)
    return out


class PromptCache:
    """The server's cache (prefix hashes, least recently used dropped past `capacity`)."""

    def __init__(self, *, min_tokens: int = 1024, capacity: int = 100_000) -> None:
        self.min_tokens = min_tokens  # Anthropic's minimum cacheable prefix
        self.capacity = capacity
        self._known: OrderedDict[bytes, None] = OrderedDict()

    def clear(self) -> None:
        self._known.clear()

    def _has(self, key: bytes) -> bool:
        if key in self._known:
            self._known.move_to_end(key)
            return True
        return False

    def _add(self, key: bytes) -> None:
        self._known[key] = None
        self._known.move_to_end(key)
        while len(self._known) > self.capacity:
            self._known.popitem(last=False)

    def account(self, wire: str, body: dict[str, Any], prompt_tokens: int) -> CacheUsage:
        """Bill one request against the cache (and update it)."""
        if wire == "anthropic":
            return self._explicit(body, prompt_tokens)
        flavour = "deepseek" if str(body.get("model") or "").startswith("deepseek") else "openai"
        return self._automatic(flavour, body, prompt_tokens)

    def _explicit(self, body: dict[str, Any], prompt_tokens: int) -> CacheUsage:
        blocks = anthropic_blocks(body)
        keys = _chain([b for b, _ in blocks])
        tokens, size = [], 0
        for block, _ in blocks:
            size += len(block)
            tokens.append(size // 4)
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        hit = -1
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if i <= hit:
                    break
                if self._has(keys[i]):
                    hit = i
                    break
        read = tokens[hit] if hit >= 0 else 0
        written = [m for m in marks if m > hit and tokens[m] >= self.min_tokens]
        for m in written:
            self._add(keys[m])
        write = tokens[written[-1]] - read if written else 0
        return _clamped("anthropic", prompt_tokens, read, write)

    def _automatic(self, flavour: str, body: dict[str, Any], prompt_tokens: int) -> CacheUsage:
        step, minimum = _UNITS[flavour]
        prefix = _canonical(body.get("tools") or []) + _canonical(body.get("messages") or [])
        size = step * 4
        keys = _chain([prefix[i : i + size] for i in range(0, len(prefix) - size + 1, size)])
        hits = 0
        while hits < len(keys) and self._has(keys[hits]):
            hits += 1
        for key in keys[hits:]:
            self._add(key)
        read = hits * step
        return _clamped(flavour, prompt_tokens, read if read >= minimum else 0, 0)


def _clamped(flavour: str, prompt: int, read: int, write: int) -> CacheUsage:
    read = min(read, prompt)
    return CacheUsage(flavour=flavour, prompt=prompt, read=read, write=min(write, prompt - read))
