"""A session as a readable transcript (`kgent sessions export ID --format md|html|json`): the active branch's prompts,
answers, tool calls with their results and diffs, approvals, checkpoints and the cost — every text redacted (the
configured keys and anything shaped like a secret), the attached images inline in the HTML."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from kgent.core.messages import Usage
from kgent.core.redact import redact
from kgent.kernel.cost import usage_text
from kgent.providers.pricing import PriceTable, builtin_prices
from kgent.session.entries import SessionEntry
from kgent.session.store import SessionStore

Format = Literal["md", "html", "json"]
FORMATS: tuple[Format, ...] = ("md", "html", "json")


@dataclass(slots=True)
class _Item:
    """One block of the transcript."""

    kind: str  # user | assistant | tool | permission | compaction
    title: str
    text: str = ""
    code: str = ""  # shown preformatted (tool arguments, output)
    diff: str = ""
    images: list[tuple[str, bytes]] = field(default_factory=list)  # (mime type, bytes)


def _clean(value: Any) -> Any:
    """Every string inside `value`, redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


async def _items(store: SessionStore, session_id: str, branch: list[SessionEntry]) -> list[_Item]:
    items: list[_Item] = []
    for entry in branch:
        data = _clean(entry.data)
        if entry.type == "compaction":
            items.append(
                _Item("compaction", "Checkpoint (older messages summarized)", text=data.get("summary", ""))
            )
        elif entry.type == "permission":
            verdict = "approved" if data.get("approved") else "rejected"
            items.append(
                _Item(
                    "permission",
                    f"{data.get('tool')}: {verdict} ({data.get('source')})",
                    data.get("reason", ""),
                )
            )
        elif entry.type == "message":
            m = data.get("message") or {}
            role = m.get("role")
            if role == "user":
                images = []
                for image in m.get("images") or []:
                    try:
                        images.append(
                            (str(image["mimeType"]), await store.get_blob(session_id, str(image["sha256"])))
                        )
                    except Exception:  # a missing blob: the transcript says so instead of failing
                        images.append((str(image.get("mimeType", "image")), b""))
                items.append(_Item("user", "You", text=m.get("text", ""), images=images))
            elif role == "assistant":
                calls = m.get("toolCalls") or []
                text = m.get("text", "")
                if text or not calls:
                    items.append(_Item("assistant", "Kgent", text=text))
                for call in calls:
                    args = json.dumps(call.get("arguments", {}), ensure_ascii=False, indent=2)
                    items.append(_Item("tool", f"Tool call `{call.get('name')}`", code=args))
            elif role == "tool":
                details = m.get("details") or {}
                state = "failed" if m.get("isError") else "result"
                items.append(
                    _Item(
                        "tool",
                        f"`{m.get('name')}` {state}",
                        code=m.get("content", ""),
                        diff=details.get("diff", ""),
                    )
                )
    return items


def _cost(branch: list[SessionEntry], prices: PriceTable) -> str:
    """The branch's tokens and estimated cost, summed over its model calls."""
    total, cost, priced = Usage(), 0.0, True
    for entry in branch:
        m = entry.data.get("message") if entry.type == "message" else None
        if not isinstance(m, dict) or m.get("role") != "assistant" or not m.get("usage"):
            continue
        usage = Usage.from_dict(m["usage"])
        total = total + usage
        price = prices.price(str(m.get("model") or ""))
        if price is None:
            priced = False
        else:
            cost += price.cost(usage)
    return usage_text(total, cost if priced else None)


def _fence(text: str, lang: str = "") -> str:
    ticks = "````" if "```" in text else "```"
    return f"{ticks}{lang}\n{text.rstrip(chr(10))}\n{ticks}"


def _markdown(title: str, head: list[str], items: list[_Item]) -> str:
    out = [f"# {title}", "", *[f"- {line}" for line in head], ""]
    for it in items:
        out.append(f"## {it.title}")
        if it.text:
            out += ["", it.text]
        for mime, data in it.images:
            out += ["", f"*(image: {mime}, {len(data)} bytes)*"]
        if it.code:
            out += ["", _fence(it.code, "json" if it.title.startswith("Tool call") else "")]
        if it.diff:
            out += ["", _fence(it.diff, "diff")]
        out.append("")
    return "\n".join(out)


_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.5}"
    "section{border-left:3px solid #ccc;padding:.2rem 1rem;margin:1rem 0}section.user{border-color:#36c}"
    "section.assistant{border-color:#3a3}section.tool{border-color:#999}section.permission{border-color:#c90}"
    "pre{background:#f5f5f5;padding:.6rem;overflow-x:auto;white-space:pre-wrap}img{max-width:100%}"
    ".add{color:#070}.del{color:#a00}"
)


def _diff_html(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        cls = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        lines.append(f'<span class="{cls}">{html.escape(line)}</span>' if cls else html.escape(line))
    return "<pre>" + "\n".join(lines) + "</pre>"


def _html(title: str, head: list[str], items: list[_Item]) -> str:
    e = html.escape
    out = [
        "<!doctype html>",
        '<html><head><meta charset="utf-8">',
        # a transcript runs nothing: no script, no remote resource (the images are data: URIs)
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">",
        f"<title>{e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{e(title)}</h1><ul>" + "".join(f"<li>{e(line)}</li>" for line in head) + "</ul>",
    ]
    for it in items:
        out.append(f'<section class="{e(it.kind)}"><h2>{e(it.title)}</h2>')
        if it.text:
            out += [f"<p>{e(p)}</p>" for p in it.text.split("\n\n")]
        for mime, data in it.images:
            if data and mime.startswith("image/"):
                out.append(
                    f'<img alt="attached image" src="data:{e(mime)};base64,{base64.b64encode(data).decode()}">'
                )
            else:
                out.append(f"<p><em>(image {e(mime)}: not available)</em></p>")
        if it.code:
            out.append(f"<pre>{e(it.code)}</pre>")
        if it.diff:
            out.append(_diff_html(it.diff))
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out)


async def export_session(
    store: SessionStore, session_id: str, fmt: Format, *, prices: PriceTable | None = None
) -> str:
    """The session's active branch as Markdown, HTML or JSON, redacted. Raises the store's SessionNotFound."""
    tree = await store.load(session_id)
    branch = tree.branch()
    info = tree.info
    title = redact(info.title or f"Session {info.id}")
    head = [
        f"session {info.id}",
        f"workspace {redact(info.workspace)}",
        f"created {info.created}",
        f"tokens {_cost(branch, prices or builtin_prices())}",
    ]
    if fmt == "json":
        doc = {
            "session": _clean(info.to_dict()),
            "usage": head[-1].removeprefix("tokens "),
            "entries": [_clean(e.to_dict()) for e in branch],
        }
        return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    items = await _items(store, session_id, branch)
    render: Callable[[str, list[str], list[_Item]], str] = _markdown if fmt == "md" else _html
    return render(title, head, items)
