"""SummarizingProvider: wraps a provider (usually the ScriptedProvider) so compaction works without a real model.

Summary requests (see kgent.context.summary) get a deterministic, valid eight-section summary built from the
request itself; every other request goes to the wrapped provider unchanged.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

from kgent.context.summary import SECTIONS, SUMMARY_SYSTEM_PROMPT
from kgent.context.tokens import estimate_text
from kgent.core.messages import AssistantMessage, Usage, UserMessage
from kgent.providers.base import Provider, ProviderRequest, StreamDone, StreamEvent, TextDelta


def is_summary_request(request: ProviderRequest) -> bool:
    """A compaction's summary request: the summarizer's system prompt, no tools."""
    return request.system_prompt == SUMMARY_SYSTEM_PROMPT and not request.tools


def _between(text: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", text, re.S)
    return m.group(1) if m else ""


def scripted_summary(request: ProviderRequest) -> str:
    """A valid summary of a summary request, made without a model: the goal is the first user message seen
    (kept from the previous summary on updates), the rest counts and lists what the span contains."""
    prompt = (
        request.messages[-1].text
        if request.messages and isinstance(request.messages[-1], UserMessage)
        else ""
    )
    previous, conversation = _between(prompt, "previous-summary"), _between(prompt, "conversation")
    goal = re.search(r"^## Goal\n(.*?)(?=\n## )", previous, re.S | re.M)
    users = re.findall(r"^\[User\]: (.*)$", conversation, re.M)
    calls = re.findall(r"^\[Assistant tool calls\]: (.*)$", conversation, re.M)
    errors = len(re.findall(r"^\[Tool result \S+ \(error\)\]", conversation, re.M))
    files = _between(prompt, "files").splitlines()
    done = re.search(r"^## Done and verified\n(.*?)(?=\n## )", previous, re.S | re.M)
    body = {
        "Goal": goal.group(1).strip() if goal else f"- {users[0] if users else '(unknown)'}",
        "Constraints and preferences": "- (none)",
        "Done and verified": "\n".join(
            x
            for x in (
                (done.group(1).strip() if done else ""),
                f"- {len(calls)} tool call batch(es) in this span",
            )
            if x
        ),
        "In progress": "- continuing the task",
        "Blocked": f"- {errors} tool error(s)" if errors else "- (none)",
        "Key decisions and rejected approaches": "- (none)",
        "Exact files, symbols, commands and errors": "\n".join(f"- {line}" for line in files) or "- (none)",
        "Next steps": "- continue from the kept messages",
    }
    return "\n\n".join(f"## {s}\n{body[s]}" for s in SECTIONS)


class SummarizingProvider:
    """`inner`, plus model-free answers to summary requests. `summaries` counts the ones it answered."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.summaries = 0

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        if not is_summary_request(request):
            async for event in self.inner.stream(request):
                yield event
            return
        self.summaries += 1
        text = scripted_summary(request)
        yield TextDelta(text)
        prompt_tokens = sum(estimate_text(getattr(m, "text", "")) for m in request.messages)
        yield StreamDone(
            AssistantMessage(
                text=text,
                usage=Usage(input_tokens=prompt_tokens, output_tokens=estimate_text(text)),
                provider=self.name,
                model=self.model,
            )
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
