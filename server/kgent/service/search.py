"""`agent/sessions {query}`: which sessions hold every word of a query — in their title or id, or in the text of
their prompts and answers (any branch). Tool output is left out: a word a command printed does not find the session,
what was asked and answered does."""

from __future__ import annotations

from kgent.session.entries import SessionInfo, SessionTree


def query_words(query: str | None) -> list[str]:
    """The words to find, lowercased (none: no filter)."""
    return (query or "").lower().split()


def named_by(info: SessionInfo, words: list[str]) -> bool:
    """Whether the session's title and id alone hold every word (then its file need not be read)."""
    hay = f"{info.title} {info.id}".lower()
    return all(w in hay for w in words)


def conversation(tree: SessionTree) -> str:
    """The text of the session's prompts and answers, lowercased, one message a line."""
    texts = []
    for entry in tree.entries.values():
        message = entry.data.get("message") if entry.type == "message" else None
        if isinstance(message, dict) and message.get("role") in ("user", "assistant"):
            text = message.get("text")
            if isinstance(text, str):
                texts.append(text)
    return "\n".join(texts).lower()


def holds(info: SessionInfo, tree: SessionTree, words: list[str]) -> bool:
    """Whether every word is in the session's title, id or conversation."""
    hay = f"{info.title} {info.id}\n{conversation(tree)}".lower()
    return all(w in hay for w in words)
